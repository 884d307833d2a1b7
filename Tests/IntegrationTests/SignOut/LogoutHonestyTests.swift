import Foundation
import Testing
@testable import PortalAuth

/// Issue 45 and issue 35 item 5, against the bundled server: `sign-out` and `iap logout` without a terminal or a
/// browser that can be seen revoke what needs no browser and say what stays; a stored IAP sign-in follows its
/// configuration file. In `SignOutTests`, whose
/// tests run one at a time (a logout at the server deletes every token of its one user).
extension SignOutTests {
    /// No display, no `$BROWSER`, no SSH, standard input a pipe: a browser logout cannot be confirmed here.
    static let headless = [
        "DISPLAY": "", "WAYLAND_DISPLAY": "", "BROWSER": "", "SSH_CONNECTION": "", "SSH_CLIENT": "", "SSH_TTY": "",
    ]

    @Test(
        "sign-out and iap logout without a terminal or a visible browser revoke the IAP refresh token (the server's revocation counter), delete the sign-in, and name the browser session that stays, exit 69 (issue 45)"
    )
    func headlessSignOutRevokes() async throws {
        let control = try await TestControl.prepared()
        try await control.configure(["advertise_revocation": .bool(true)])
        do {
            try await headlessSignOut(server: control.server)
        } catch {
            try? await control.resetConfiguration()
            throw error
        }
        try await control.resetConfiguration()
    }

    private func headlessSignOut(server: TestServer) async throws {
        let store = try ScratchStore()
        let environment = Self.headless.merging(["PORTAL_AUTH_STORE": store.path]) { $1 }

        // sign-out, for scripts.
        let first = try await Self.iapLogin(server, store)
        var before = try await Self.revocationCount(server)
        let signOut = try await ToolRunner.run(
            ["sign-out", "--format", "json", "--timeout", "60"], environment: environment, timeout: .seconds(60))
        #expect(signOut.status == 69, "the browser session stays: \(signOut)")
        #expect(try await Self.revocationCount(server) - before == 1, "the refresh token was revoked at the server")
        #expect(try await Self.oidcRefreshError(server, refreshToken: first.refresh) == "invalid_grant")
        #expect(try store.entries().isEmpty)
        let json = try JSONValue.parse(Data(signOut.stdout.utf8))
        let entry = try #require(json["credentials"]?.arrayValue?.first)
        #expect(entry["kind"]?.stringValue == "iap")
        #expect(entry["target"]?.stringValue == server.iapConfig, "the same target as status")
        #expect(entry["outcome"]?.stringValue == "browser_logout_skipped")
        #expect(entry["revocation"]?.stringValue == "revoked")
        #expect(entry["tokens_revoked"]?.boolValue == true)
        #expect(entry["session_ended"]?.boolValue == false)
        #expect(entry["refresh_token_left_valid"]?.boolValue == false)
        #expect(entry["browser_logout_skipped"]?.stringValue?.isEmpty == false)
        #expect(
            entry["still_valid"]?.arrayValue?.first?.stringValue?.hasPrefix(
                "the browser session at the identity provider")
                == true, "\(signOut)")
        Self.expectNoSecret(first.all, in: signOut)

        // iap logout: the same rule.
        let second = try await Self.iapLogin(server, store)
        before = try await Self.revocationCount(server)
        let logout = try await ToolRunner.run(
            ["iap", "logout", "--config", server.iapConfig, "--timeout", "60"], environment: environment,
            timeout: .seconds(60))
        #expect(logout.status == 69, "\(logout)")
        #expect(try await Self.revocationCount(server) - before == 1, "the refresh token was revoked at the server")
        #expect(try await Self.oidcRefreshError(server, refreshToken: second.refresh) == "invalid_grant")
        #expect(logout.stderr.contains("The identity provider revoked the tokens (alice)."), "\(logout)")
        #expect(
            logout.stderr.contains("no browser logout could run here")
                && logout.stderr.contains("so the browser session at the identity provider stays (alice)"), "\(logout)")
        #expect(logout.stderr.contains("was deleted"), "\(logout)")
        #expect(try store.entries().isEmpty)
        Self.expectNoSecret(second.all, in: logout)
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
