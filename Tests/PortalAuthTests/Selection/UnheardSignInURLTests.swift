import Foundation
import Logging
import Testing
@testable import PortalAuth
import PortalAuthTesting
@testable import PortalAuthStore

/// A library sign-in that opens no browser makes its URL reachable: a log event, and when nobody hears (the
/// silent observer and a no-op logger) an error at once instead of a silent wait.
@Suite("A sign-in URL nobody hears")
struct UnheardSignInURLTests {
    static let configuration = OAuthUserConfiguration(
        portalURL: URL(string: "https://gis.example/portal")!, clientID: "abc123")

    @Test("no browser, silent observer, no-op logger: fails at once with what to give")
    func unheard() async throws {
        let settings = SignInSettings(
            browser: nil, timeout: .seconds(600), httpClient: ScriptedHTTPClient([.failure(CancellationError())]))
        let error = await #expect(throws: SignInError.self) {
            try await OAuthUserCredential.credential(for: Self.configuration, settings: settings)
        }
        #expect(error?.category == .usage)
        #expect(error?.description.contains("nothing shows the person the sign-in URL") == true)
    }

    @Test("no browser, a logger: the URL is logged (notice) before the wait")
    func logged() async throws {
        let lines = LogLines()
        var logger = Logger(label: "test") { _ in CapturingLogHandler(storage: lines) }
        logger.logLevel = .notice
        let settings = SignInSettings(
            browser: nil, timeout: .seconds(1), httpClient: ScriptedHTTPClient([.failure(CancellationError())]),
            logger: logger)
        let error = await #expect(throws: SignInError.self) {
            try await OAuthUserCredential.credential(for: Self.configuration, settings: settings)
        }
        #expect(error?.isTimeout == true, "it waited for the redirect: \(String(describing: error))")
        #expect(lines.text.contains("open the sign-in URL in a browser"))
        #expect(lines.text.contains("https://gis.example/portal/sharing/rest/oauth2/authorize?"))
    }
}
