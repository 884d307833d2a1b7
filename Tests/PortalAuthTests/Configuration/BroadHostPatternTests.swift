import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthStore
@testable import PortalAuthTransport

/// `hosts_behind_proxy` entries that send the IAP token to every host or a whole top-level domain are valid, but
/// never silent (issue 12, item 15).
@Suite("Host patterns that cover too much")
struct BroadHostPatternTests {
    private static func file(hosts: [String]) -> Data {
        let list = hosts.map { "\"\($0)\"" }.joined(separator: ", ")
        return Data(
            #"{"authorize_url": "https://idp.example/a", "token_url": "https://idp.example/t", "logout_url": "https://idp.example/l", "client_id": "abc", "redirect_url": "http://127.0.0.1/cb", "scope": ["openid"], "hosts_behind_proxy": [\#(list)]}"#
                .utf8)
    }

    @Test(
        "a file with * or *.com loads, with a warning naming the entry",
        arguments: [
            (["*"], 0, "every host"), (["maps.contoso.com", "*.com"], 1, "top-level domain .com"),
            (["*.COM."], 0, ".com"),
        ])
    func warned(hosts: [String], index: Int, says: String) throws {
        let report = IAPConfiguration.report(
            parsing: Self.file(hosts: hosts), file: URL(fileURLWithPath: "/tmp/iap.json"))
        #expect(report.errors.isEmpty)
        #expect(report.configuration != nil)
        let warning = try #require(
            report.warnings.first { $0.key == "hosts_behind_proxy[\(index)]" }, "\(report.warnings)")
        #expect(warning.message.contains(says), "\(warning.message)")
        #expect(warning.line != nil)
    }

    @Test(
        "organisation patterns are not warned about",
        arguments: [["*.contoso.com"], ["maps.contoso.com:8443"], ["[::1]"], ["*.co.uk.contoso.com"]])
    func quiet(hosts: [String]) {
        let report = IAPConfiguration.report(
            parsing: Self.file(hosts: hosts), file: URL(fileURLWithPath: "/tmp/iap.json"))
        #expect(report.warnings.isEmpty, "\(report.warnings)")
    }

    @Test("a configuration built in code lists the same warnings, and a sign-in reports them before the browser opens")
    func signInWarns() async throws {
        let configuration = try IAPConfiguration.configuration(
            authorizeURL: URL(string: "https://idp.example/a")!, tokenURL: URL(string: "https://idp.example/t")!,
            logoutURL: URL(string: "https://idp.example/l")!, clientID: "abc",
            redirectURL: URL(string: "http://127.0.0.1/cb")!,
            scopes: ["openid"], hostsBehindProxy: ["*.contoso.com", "*"])
        #expect(configuration.broadHostPatternWarnings.count == 1)
        #expect(configuration.broadHostPatternWarnings.first?.contains("hosts_behind_proxy[1]") == true)

        final class Recorder: SignInObserver, @unchecked Sendable {
            let lock = NSLock()
            var warnings: [String] = []
            var openedAfterWarning = false
            func configurationWarning(_ message: String) { lock.withLock { warnings.append(message) } }
            func signInWillOpenBrowser(url: URL, listeningOn redirectURL: URL) {
                lock.withLock { openedAfterWarning = !warnings.isEmpty }
            }
        }
        let recorder = Recorder()
        let settings = SignInSettings(
            browser: nil, timeout: .milliseconds(300), observer: recorder, httpClient: RefusingHTTPClient())
        _ = try? await IAPCredential.credential(for: configuration, settings: settings)
        #expect(recorder.lock.withLock { recorder.warnings.count } == 1)
        #expect(recorder.lock.withLock { recorder.openedAfterWarning })
    }
}

/// An HTTP client that answers every request with 404 (issuer discovery finds nothing).
private struct RefusingHTTPClient: TransportClient {
    func send(_ request: TransportRequest) async throws -> TransportResponse {
        TransportResponse(statusCode: 404, url: request.url)
    }
}
