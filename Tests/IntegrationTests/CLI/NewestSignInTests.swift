import Foundation
import Testing
@testable import PortalAuth

/// Which sign-in is active after a second one (issue 28, point 9): the newest, as with `gh auth login` and
/// `az login`; the tool says so and how to pick another.
@Suite("The newest sign-in is the default", .serialized, .enabled(if: TestServer.isConfigured))
struct NewestSignInTests {
    @Test("a second sign-in becomes the default: token without options gives its token; use picks the other again")
    func newestIsDefault() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        let environment = ["PORTAL_AUTH_STORE": store.path, "PORTAL_AUTH_TEST_BROWSER_TIMEOUT": "60"]
        try await store.signIn(.portal, server: server)
        let second = try await ToolRunner.run(
            ["iap", "login", "--config", server.iapConfig, "--browser-command", server.browser, "--timeout", "90"],
            environment: environment, timeout: .seconds(120))
        #expect(second.status == 0, "\(second)")
        #expect(second.stderr.contains("It is now the default sign-in (2 are stored)"), "\(second)")

        let token = try await ToolRunner.run(["token"], environment: environment)
        #expect(token.status == 0, "\(token)")
        #expect(token.stdout == (try store.field("access_token", of: .iap) ?? "") + "\n")
        let use = try await ToolRunner.run(["use", "--portal", server.portal], environment: environment)
        #expect(use.status == 0, "\(use)")
        let portal = try await ToolRunner.run(["token"], environment: environment)
        #expect(portal.stdout == (try store.field("access_token", of: .portal) ?? "") + "\n")
        try await SignOutTests.revokeEverything(server, store)
    }
}
