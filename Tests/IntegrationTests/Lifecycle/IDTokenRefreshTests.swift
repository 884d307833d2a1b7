import Foundation
import Testing
@testable import PortalAuth

/// `token --id-token --min-valid N` when the identity provider answers the refresh without a new ID token (OIDC
/// Core 12.2 allows it): the old ID token, expired or too short-lived, is never printed; a new sign-in is needed.
@Suite(
    "ID token after a refresh without one", .serialized, .enabled(if: TestServer.isConfigured), .timeLimit(.minutes(4)))
struct IDTokenRefreshTests {
    @Test(
        "an expired ID token is not printed: exit 77 with the sign-in command; --interactive signs in and prints a new one"
    )
    func expiredIDTokenNeedsSignIn() async throws {
        let server = try TestServer.current()
        let proxy = try await FaultProxy.start(upstream: server.base)
        defer { proxy.stop() }
        let store = try ScratchStore()
        try await store.signIn(.iap, server: server)
        let oldIDToken = try #require(try store.field("id_token", of: .iap))
        // The stored ID token has expired while the access token is still good; refreshes go through the proxy,
        // which drops the id_token from the provider's answer.
        let expired = Int64(Date().timeIntervalSince1970) - 10
        let proxiedBase = proxy.base
        let realBase = server.base
        try await store.rewrite(.iap) { entry in
            entry["id_token_expires_at"] = .integer(expired)
            if let tokenURL = entry["token_url"]?.stringValue {
                entry["token_url"] = .string(tokenURL.replacingOccurrences(of: realBase, with: proxiedBase))
            }
        }
        try await proxy.arm("no-id-token")
        let environment = ["PORTAL_AUTH_STORE": store.path]
        let arguments = ["token"] + SignInKind.iap.selector(server) + ["--id-token", "--min-valid", "60"]

        let refused = try await ToolRunner.run(arguments, environment: environment)
        #expect(refused.status == 77, "\(refused)")
        #expect(refused.stdout.isEmpty, "no token is printed")
        #expect(refused.stderr.contains("ID token"))
        #expect(refused.stderr.contains("portal-auth iap login --config \(server.iapConfig)"), "\(refused.stderr)")
        #expect(refused.stderr.contains("--interactive"))
        #expect(refused.leaksNone(of: [oldIDToken]))
        #expect(try await proxy.state().faulted == 1, "one refresh was tried, and answered without an ID token")

        let signedIn = try await ToolRunner.run(
            arguments + ["--interactive", "--browser-command", server.browser, "--timeout", "90"],
            environment: environment.merging(["PORTAL_AUTH_TEST_BROWSER_TIMEOUT": "60"]) { $1 }, timeout: .seconds(150))
        #expect(signedIn.status == 0, "\(signedIn)")
        let printed = signedIn.stdout.trimmingCharacters(in: .newlines)
        #expect(!printed.isEmpty && printed != oldIDToken)
        let decoded = try IDToken(compact: printed)
        #expect(decoded.expirationDate.timeIntervalSinceNow > 60, "the printed ID token is valid for --min-valid")
        #expect(try store.field("id_token", of: .iap) == printed)
    }
}
