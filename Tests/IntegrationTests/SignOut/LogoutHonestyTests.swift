import Foundation
import Testing
@testable import PortalAuth

/// Issue 34 item 6 and issue 35 item 5, against the bundled server: `iap logout` without a terminal or a browser
/// that can be seen keeps the sign-in; a stored IAP sign-in follows its configuration file. In `SignOutTests`, whose
/// tests run one at a time (a logout at the server deletes every token of its one user).
extension SignOutTests {
    /// No display, no `$BROWSER`, no SSH, standard input a pipe: a browser logout cannot be confirmed here.
    static let headless = [
        "DISPLAY": "", "WAYLAND_DISPLAY": "", "BROWSER": "", "SSH_CONNECTION": "", "SSH_CLIENT": "", "SSH_TTY": "",
    ]

    @Test(
        "iap logout without a terminal or a visible browser: the sign-in is kept, nothing revoked, commands that work, exit 64"
    )
    func iapLogoutHeadless() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        let tokens = try await Self.iapLogin(server, store)
        let before = try store.entries()
        let result = try await ToolRunner.run(
            ["iap", "logout", "--config", server.iapConfig, "--timeout", "60"],
            environment: Self.headless.merging(["PORTAL_AUTH_STORE": store.path]) { $1 }, timeout: .seconds(60))
        #expect(result.status == 64, "\(result)")
        #expect(result.stderr.contains("was kept: nothing was revoked or deleted"), "\(result)")
        #expect(result.stderr.contains("Run this on a terminal:\n    portal-auth iap logout --config"), "\(result)")
        #expect(result.stderr.contains("--browser --browser-command CMD"), "\(result)")
        #expect(try store.entries() == before, "the stored sign-in is untouched")
        #expect(try await Self.iapStatus(server, token: tokens.access) == 200, "the server was told nothing")
        Self.expectNoSecret(tokens.all, in: result)

        // The suggested command works once there is a terminal or a browser: here the test's browser, forced.
        let done = try await ToolRunner.run(
            [
                "iap", "logout", "--config", server.iapConfig, "--browser", "--browser-command", server.browser,
                "--timeout", "60",
            ],
            environment: Self.headless.merging(["PORTAL_AUTH_STORE": store.path]) { $1 }, timeout: .seconds(90))
        #expect(done.status == 0, "\(done)")
        #expect(done.stderr.contains("The identity provider confirmed the end of the browser session"), "\(done)")
        #expect(try store.entries().isEmpty)
        #expect(try await Self.iapStatus(server, token: tokens.access) == 401)
    }

    @Test(
        "a host added to the IAP configuration file after the sign-in gets the token: request answers with the stored sign-in"
    )
    func configurationFileIsTheTruth() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        let original = try Data(contentsOf: URL(fileURLWithPath: server.iapConfig))
        guard case .object(var object) = try JSONValue.parse(original) else { throw ScratchFailure() }
        let file = store.directory.appendingPathComponent("iap.json")
        object["hosts_behind_proxy"] = .array([.string("elsewhere.example")])
        try Data(JSONValue.object(object).serialized(indent: 2).utf8).write(to: file)

        let login = try await ToolRunner.run(
            ["iap", "login", "--config", file.path, "--browser-command", server.browser, "--timeout", "90"],
            environment: ["PORTAL_AUTH_STORE": store.path], timeout: .seconds(120))
        try #require(login.status == 0, "\(login)")
        let tokens = try Self.tokens(store, kind: "iap")
        let environment = ["PORTAL_AUTH_STORE": store.path]

        let uncovered = try await ToolRunner.run(
            ["request", server.iapURL, "-H", "Accept: application/json"], environment: environment)
        #expect(!uncovered.stdout.contains("\"user\""), "no token for a host the file does not name: \(uncovered)")

        object["hosts_behind_proxy"] = .array([.string("elsewhere.example"), .string("localhost")])
        try Data(JSONValue.object(object).serialized(indent: 2).utf8).write(to: file)
        let covered = try await ToolRunner.run(
            ["request", server.iapURL, "-H", "Accept: application/json"], environment: environment)
        #expect(covered.status == 0, "\(covered)")
        #expect(
            covered.stdout.contains("\"user\""),
            "the stored sign-in's token went to the host added to the file: \(covered)")
        #expect(!covered.stderr.contains("iap login"), "\(covered)")

        // Another client ID in the file: the sign-in stored for it is not the file's; what differs and the fix are said.
        object["client_id"] = .string("another-client")
        try Data(JSONValue.object(object).serialized(indent: 2).utf8).write(to: file)
        let changed = try await ToolRunner.run(["token", "--iap", file.path], environment: environment)
        #expect(changed.status == 77, "\(changed)")
        #expect(changed.stderr.contains("client_id is now another-client"), "\(changed)")
        #expect(changed.stderr.contains("portal-auth iap login --config \(file.path)"), "\(changed)")
        Self.expectNoSecret(tokens.all, in: changed)
        try await Self.revokeEverything(server, store)
    }

    @Test(
        "login with the portal URL as pasted (…/sharing/rest/): stored as the portal URL, said, and found by every form"
    )
    func portalURLForms() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        let pasted = server.portal + "/sharing/rest/"
        let login = try await ToolRunner.run(
            [
                "login", "--portal", pasted, "--client-id", server.clientID, "--browser-command", server.browser,
                "--timeout", "90",
            ],
            environment: ["PORTAL_AUTH_STORE": store.path], timeout: .seconds(120))
        try #require(login.status == 0, "\(login)")
        #expect(login.stderr.contains("Using the portal URL \(server.portal) (from \(pasted))"), "\(login)")
        let entry = try #require(store.entries().values.first)
        #expect(entry["portal_url"]?.stringValue == server.portal, "\(entry)")
        for form in [
            server.portal, server.portal + "/", server.portal + "/sharing/rest", server.portal + "/home/index.html",
        ] {
            let token = try await ToolRunner.run(
                ["token", "--portal", form], environment: ["PORTAL_AUTH_STORE": store.path])
            #expect(token.status == 0, "\(form): \(token)")
        }
        try await Self.revokeEverything(server, store)
    }

    struct ScratchFailure: Error {}
}
