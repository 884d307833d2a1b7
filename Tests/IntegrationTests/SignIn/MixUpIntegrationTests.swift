import Foundation
import Testing
import TestSupport
@testable import PortalAuth

/// Issue 25.1 with two real providers on loopback: the hostile A (`Tests/Fakes/mixup_provider.py`) relays the
/// browser to the honest B (the bundled server), which signs alice in and redirects back with B's code and B's
/// `iss`. The configuration names A's endpoints. Whether A's discovery document claims B's issuer or A has none,
/// B's code and the PKCE verifier must never reach A's token endpoint.
@Suite(
    "Mix-up attack through two loopback providers", .serialized, .enabled(if: TestServer.isConfigured),
    .timeLimit(.minutes(5)))
struct MixUpIntegrationTests {
    /// The hostile provider A, stopped with `stop()` and when this process ends.
    final class HostileProvider: Sendable {
        private let server: TestServerProcess
        let base: String

        static func start(honest issuer: String, document: String) async throws -> HostileProvider {
            try await BlockingWork.run { try HostileProvider(honest: issuer, document: document) }
        }

        private init(honest issuer: String, document: String) throws {
            server = try TestServerProcess.fake(
                "mixup_provider.py", ["--honest", issuer, "--document", document, "--lifetime", "300"])
            base = try server.announcedBase()
        }

        /// How many token requests, codes and PKCE verifiers reached A.
        func log() async throws -> JSONValue {
            try JSONValue.parse(try await CurlHTTPClient().send(.get(URL(string: "\(base)/__log__")!)).body)
        }

        func stop() {
            server.stop()
        }
    }

    @Test("B's code and verifier never reach A's token endpoint", arguments: ["claim-honest", "none"])
    func relayed(document: String) async throws {
        let server = try TestServer.current()
        let hostile = try await HostileProvider.start(honest: server.issuer, document: document)
        defer { hostile.stop() }
        let store = try ScratchStore()
        let config = store.directory.appendingPathComponent("iap-hostile.json").path
        let text = try String(contentsOfFile: server.iapConfig, encoding: .utf8)
            .replacingOccurrences(of: server.base + "/o/authorize/", with: hostile.base + "/oauth2/authorize")
            .replacingOccurrences(of: server.base + "/o/token/", with: hostile.base + "/oauth2/token")
        try text.write(toFile: config, atomically: true, encoding: .utf8)

        let result = try await ToolRunner.run(
            ["iap", "login", "--config", config, "--browser-command", server.browser, "--timeout", "60"],
            environment: ["PORTAL_AUTH_STORE": store.path, "PORTAL_AUTH_TEST_BROWSER_TIMEOUT": "50"],
            timeout: .seconds(90))
        let log = try await hostile.log()
        #expect(
            log["codes"]?.integerValue == 0 && log["verifiers"]?.integerValue == 0,
            "\(document): A got B's code: \(log)")
        #expect(result.status != 0, "\(document): \(result)")
        #expect(
            result.stderr.contains(server.issuer), "\(document): the error does not name B's issuer: \(result.stderr)")
        #expect(((try? store.entries()) ?? [:]).isEmpty, "\(document): a sign-in was stored")
    }
}
