import Foundation
import Glibc
import Testing
@testable import PortalAuth

/// `portal-auth revoke`, `iap logout` and `sign-out` against the bundled authorization server, checked by the
/// server's own answers. Serialized, and to be run with `--no-parallel`: an RP-initiated logout deletes every
/// token of the server's one user, for every client, which would pull the tokens from under a concurrent test.
@Suite("Revocation, IAP logout and sign-out end to end", .serialized, .enabled(if: TestServer.isConfigured))
struct SignOutTests {
    // MARK: - revoke

    @Test(
        "revoke: the portal then rejects the access token (498) and the refresh token (invalid_grant); the entry is gone"
    )
    func revoke() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        let tokens = try await Self.portalLogin(server, store)
        #expect(try await Self.portalSelfError(server, token: tokens.access) == nil, "accepted before")

        let result = try await ToolRunner.run(
            ["revoke", "--portal", server.portal], environment: ["PORTAL_AUTH_STORE": store.path])
        #expect(result.status == 0, "\(result)")
        #expect(
            result.stderr.contains(
                "Revoked the tokens of the portal \(server.portal) (user alice, client ID \(server.clientID))"))
        #expect(try store.entries().isEmpty)
        #expect(try await Self.portalSelfError(server, token: tokens.access) == 498)
        #expect(try await Self.portalRefreshError(server, refreshToken: tokens.refresh) == "invalid_grant")
        Self.expectNoSecret(tokens.all, in: result)

        let again = try await ToolRunner.run(
            ["revoke", "--portal", server.portal], environment: ["PORTAL_AUTH_STORE": store.path])
        #expect(again.status == 0 && again.stderr.contains("nothing to revoke"), "\(again)")
    }

    /// How a revocation is made to fail: the stored entry's `revoke_url` is pointed elsewhere.
    enum BrokenRevocation: String, CaseIterable, CustomTestStringConvertible {
        /// A port nothing listens on.
        case unreachable
        /// An endpoint of the same portal that answers the ArcGIS error envelope with HTTP 200 (499 Token Required).
        case envelope

        var testDescription: String { rawValue }
    }

    @Test(
        "revoke that fails: the entry is deleted anyway, exit 69, and the server still accepts the token",
        arguments: BrokenRevocation.allCases)
    func revokeFailing(_ broken: BrokenRevocation) async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        let tokens = try await Self.portalLogin(server, store)
        let revokeURL: String
        switch broken {
        case .unreachable:
            let (socket, port) = try SignInTests.occupyLoopbackPort()
            close(socket)
            revokeURL = "http://127.0.0.1:\(port)/arcgis/sharing/rest/oauth2/revokeToken"
        case .envelope:
            revokeURL = "\(server.portal)/sharing/rest/portals/self"
        }
        try await Self.editEntries(store) { $0["revoke_url"] = .string(revokeURL) }

        let result = try await ToolRunner.run(
            ["revoke", "--portal", server.portal], environment: ["PORTAL_AUTH_STORE": store.path])
        #expect(result.status == 69, "\(result)")
        #expect(result.stderr.contains("could not revoke the tokens of the portal \(server.portal)"), "\(result)")
        #expect(result.stderr.contains(broken == .envelope ? "ArcGIS error 499" : "127.0.0.1"), "\(result)")
        #expect(result.stderr.contains("was deleted anyway"))
        #expect(try store.entries().isEmpty)
        #expect(try await Self.portalSelfError(server, token: tokens.access) == nil, "nothing was revoked")
        Self.expectNoSecret(tokens.all, in: result)
        try await Self.revokeDirectly(server, refreshToken: tokens.refresh)
    }

    // MARK: - iap logout

    @Test(
        "iap logout with the real browser: the loopback confirms, the entry is gone, the tokens are dead, the browser session ended"
    )
    func iapLogout() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        let profile = store.directory.appendingPathComponent("profile").path
        let log = store.directory.appendingPathComponent("browser.log").path
        let browser = ["PORTAL_AUTH_TEST_BROWSER_PROFILE": profile, "PORTAL_AUTH_TEST_BROWSER_LOG": log]
        let tokens = try await Self.iapLogin(server, store, environment: browser)
        try await Self.waitForBrowsers(log, count: 1)
        #expect(try await Self.iapStatus(server, token: tokens.access) == 200)

        let result = try await ToolRunner.run(
            ["iap", "logout", "--config", server.iapConfig, "--browser-command", server.browser, "--timeout", "60"],
            environment: browser.merging(["PORTAL_AUTH_STORE": store.path]) { $1 }, timeout: .seconds(90))
        #expect(result.status == 0, "\(result)")
        #expect(
            result.stderr.contains("The identity provider confirmed the end of the browser session (alice)"),
            "\(result)")
        // For opening by hand: the private launch page that carries the ID token (issue 23), not a URL without it.
        #expect(result.stderr.contains("open this page in the browser you signed in with"), "\(result)")
        #expect(result.stderr.contains("file:///"), "\(result)")
        #expect(!result.stderr.contains("id_token_hint"))
        #expect(try store.entries().isEmpty)
        #expect(try await Self.iapStatus(server, token: tokens.access) == 401)
        #expect(try await Self.oidcRefreshError(server, refreshToken: tokens.refresh) == "invalid_grant")
        Self.expectNoSecret(tokens.all, in: result)

        // The kept browser profile has no session any more: the next sign-in shows the login form again.
        try await Self.waitForBrowsers(log, count: 2)
        let logText = try String(contentsOfFile: log, encoding: .utf8)
        #expect(logText.contains("/callback title='Signed out'"), "the browser reached the loopback confirmation page")
        #expect(
            logText.contains("open file://"),
            "the browser command got the private launch page, not a URL with the ID token")
        #expect(!tokens.all.contains { logText.contains($0) }, "no token in the browser's arguments")
        _ = try await Self.iapLogin(server, store, environment: browser)
        try await Self.waitForBrowsers(log, count: 3)
        let signIns =
            try String(contentsOfFile: log, encoding: .utf8).components(separatedBy: "signed in as alice").count - 1
        #expect(signIns == 2, "the login form was shown again after the logout")
        try await Self.revokeEverything(server, store)
    }

    @Test("iap logout with a browser that never comes back: entry deleted, the browser session may remain, exit 75")
    func iapLogoutTimeout() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        let tokens = try await Self.iapLogin(server, store)
        let result = try await ToolRunner.run(
            ["iap", "logout", "--config", server.iapConfig, "--browser-command", "true", "--timeout", "2"],
            environment: ["PORTAL_AUTH_STORE": store.path], timeout: .seconds(30))
        #expect(result.status == 75, "\(result)")
        #expect(result.stderr.contains("No confirmation from the identity provider within 2 s"))
        #expect(result.stderr.contains("the browser session may remain"))
        #expect(try store.entries().isEmpty)
        #expect(try await Self.iapStatus(server, token: tokens.access) == 200, "the server was never told")
        Self.expectNoSecret(tokens.all, in: result)
        try await Self.revokeDirectly(server, refreshToken: tokens.refresh, portalFace: false)
    }

    @Test("Ctrl-C during iap logout: exit 130 at once, the entry is deleted all the same, the port is free")
    func iapLogoutInterrupted() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        let tokens = try await Self.iapLogin(server, store)
        let tool = try BackgroundTool.start(
            ["iap", "logout", "--config", server.iapConfig, "--browser-command", "true", "--timeout", "60"],
            environment: ["PORTAL_AUTH_STORE": store.path])
        let process = tool.process
        var text = tool.stderr(until: "Waiting for the identity provider to confirm on")
        let marker = try #require(text.range(of: "confirm on http://127.0.0.1:"), "no listening port in: \(text)")
        let port = try #require(UInt16(text[marker.upperBound...].prefix { $0.isNumber }))
        process.interrupt()
        process.waitUntilExit()
        text += String(decoding: tool.errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 130, "\(text)")  // Not 75: the interrupt ended the 60 s wait.
        #expect(
            text.contains(
                "interrupted; the stored sign-in for \(server.iapConfig) was deleted, but the browser session may remain"
            ))
        #expect(try store.entries().isEmpty)
        let (socket, _) = try SignInTests.occupyLoopbackPort(port)
        close(socket)
        try await Self.revokeDirectly(server, refreshToken: tokens.refresh, portalFace: false)
    }

    // MARK: - sign-out

    @Test("sign-out with a portal and an IAP sign-in: a summary of both, an empty store, tokens rejected by the server")
    func signOut() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        let portal = try await Self.portalLogin(server, store)
        let iap = try await Self.iapLogin(server, store)
        #expect(try store.entries().count == 2)
        let revocationsBefore = try await Self.revocationCount(server)

        let result = try await ToolRunner.run(
            ["sign-out", "--browser-command", server.browser, "--timeout", "60"],
            environment: ["PORTAL_AUTH_STORE": store.path], timeout: .seconds(90))
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("2 stored sign-ins:"))
        #expect(result.stdout.contains("the portal \(server.portal) (alice): tokens revoked"), "\(result)")
        #expect(
            result.stdout.contains(
                "the IAP configuration \(server.iapConfig) (alice): the identity provider confirmed the end of the browser session"
            ), "\(result)")
        #expect(result.stdout.contains("The credential store \(store.path) is empty."))
        #expect(try store.entries().isEmpty)
        #expect(
            try await Self.revocationCount(server) - revocationsBefore == 1, "the portal revocation reached the server")
        #expect(try await Self.portalSelfError(server, token: portal.access) == 498)
        #expect(try await Self.iapStatus(server, token: iap.access) == 401)
        Self.expectNoSecret(portal.all + iap.all, in: result)
    }

    @Test("sign-out on a terminal lists the sign-ins and asks: no keeps everything, yes signs out")
    func signOutAsks() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        let portal = try await Self.portalLogin(server, store)

        let declined = try TerminalTool(
            ["sign-out", "--timeout", "60"], environment: ["PORTAL_AUTH_STORE": store.path])
        var text = declined.read(until: "[y/N]")
        declined.type("n")
        let (status, rest) = try await declined.finish()
        text += rest
        #expect(status == 1, "\(text)")
        #expect(
            text.contains("  portal \(server.portal) (alice): its tokens are revoked at the portal"),
            "the sign-ins are listed before the question, with what will be revoked (issue 45): \(text)")
        #expect(text.contains("Sign out of it? [y/N]"))
        #expect(text.contains("Nothing was signed out."))
        #expect(try store.entries().count == 1, "nothing changed")
        #expect(try await Self.portalSelfError(server, token: portal.access) == nil, "the token still works")

        let accepted = try TerminalTool(
            ["sign-out", "--timeout", "60"], environment: ["PORTAL_AUTH_STORE": store.path])
        _ = accepted.read(until: "[y/N]")
        accepted.type("yes")
        let (acceptedStatus, acceptedRest) = try await accepted.finish()
        #expect(acceptedStatus == 0, "\(acceptedRest)")
        #expect(try store.entries().isEmpty)
        #expect(try await Self.portalSelfError(server, token: portal.access) == 498)
    }

    @Test("sign-out --yes on a terminal does not ask")
    func signOutYes() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        _ = try await Self.portalLogin(server, store)
        let tool = try TerminalTool(
            ["sign-out", "--yes", "--timeout", "60"], environment: ["PORTAL_AUTH_STORE": store.path])
        let (status, text) = try await tool.finish()
        #expect(status == 0, "\(text)")
        #expect(!text.contains("[y/N]"))
        #expect(try store.entries().isEmpty)
    }

    @Test("sign-out with nothing stored: exit 0; JSON for scripts")
    func signOutEmpty() async throws {
        let store = try ScratchStore()
        let result = try await ToolRunner.run(
            ["sign-out", "--format", "json"], environment: ["PORTAL_AUTH_STORE": store.path])
        #expect(result.status == 0, "\(result)")
        let json = try JSONValue.parse(Data(result.stdout.utf8))
        #expect(json["credentials"]?.arrayValue?.isEmpty == true)
        #expect(json["store_cleared"]?.boolValue == true)
    }
}

// MARK: - Helpers

extension SignOutTests {
    /// The tokens of a stored sign-in.
    struct Tokens {
        let access: String
        let refresh: String
        let id: String?
        var all: [String] { [access, refresh] + (id.map { [$0] } ?? []) }
    }

    static func portalLogin(_ server: TestServer, _ store: ScratchStore) async throws -> Tokens {
        let result = try await ToolRunner.run(
            [
                "login", "--portal", server.portal, "--client-id", server.clientID, "--browser-command", server.browser,
                "--timeout", "90",
            ],
            environment: ["PORTAL_AUTH_STORE": store.path], timeout: .seconds(120))
        try #require(result.status == 0, "\(result)")
        return try tokens(store, kind: "oauth-user")
    }

    static func iapLogin(_ server: TestServer, _ store: ScratchStore, environment: [String: String] = [:]) async throws
        -> Tokens
    {
        let result = try await ToolRunner.run(
            ["iap", "login", "--config", server.iapConfig, "--browser-command", server.browser, "--timeout", "90"],
            environment: environment.merging(["PORTAL_AUTH_STORE": store.path]) { $1 }, timeout: .seconds(120))
        try #require(result.status == 0, "\(result)")
        return try tokens(store, kind: "iap")
    }

    static func tokens(_ store: ScratchStore, kind: String) throws -> Tokens {
        let entry = try #require(store.entries().values.first { $0["kind"]?.stringValue == kind })
        return Tokens(
            access: try #require(entry["access_token"]?.stringValue),
            refresh: try #require(entry["refresh_token"]?.stringValue),
            id: entry["id_token"]?.stringValue)
    }

    /// Changes every entry of the store file.
    static func editEntries(_ store: ScratchStore, _ change: @escaping @Sendable (inout JSONObject) -> Void)
        async throws
    {
        let file = CredentialStoreFile(location: StoreLocation(path: store.path))
        try await file.update { snapshot in
            for key in snapshot.keys {
                guard var entry = snapshot.entry(for: key) else { continue }
                change(&entry)
                snapshot.set(entry, for: key)
            }
        }
    }

    /// The ArcGIS error code `portals/self` answers for `token`, or nil when it accepts it.
    static func portalSelfError(_ server: TestServer, token: String) async throws -> Int? {
        let response = try await server.get(
            "\(server.portal)/sharing/rest/portals/self?f=json", headers: [("X-Esri-Authorization", "Bearer \(token)")])
        let json = try JSONValue.parse(response.body)
        if json["user"]?["username"]?.stringValue == "alice" { return nil }
        return json["error"]?["code"]?.integerValue.map { Int($0) } ?? -1
    }

    /// The OAuth error the portal's token endpoint answers for a refresh with `refreshToken`, or nil on success.
    static func portalRefreshError(_ server: TestServer, refreshToken: String) async throws -> String? {
        let response = try await CurlHTTPClient().send(
            .form(
                URL(string: "\(server.portal)/sharing/rest/oauth2/token")!,
                fields: [
                    ("grant_type", "refresh_token"), ("client_id", server.clientID), ("refresh_token", refreshToken),
                    ("f", "json"),
                ]))
        let json = try JSONValue.parse(response.body)
        return json["access_token"] != nil ? nil : json["error"]?["error"]?.stringValue ?? "unknown"
    }

    /// The OAuth error the OIDC token endpoint answers for a refresh with `refreshToken`, or nil on success.
    static func oidcRefreshError(_ server: TestServer, refreshToken: String) async throws -> String? {
        let response = try await CurlHTTPClient().send(
            .form(
                URL(string: "\(server.issuer)/token/")!,
                fields: [
                    ("grant_type", "refresh_token"), ("client_id", server.clientID), ("refresh_token", refreshToken),
                ]))
        let json = try JSONValue.parse(response.body)
        return json["access_token"] != nil ? nil : json["error"]?.stringValue ?? "unknown"
    }

    /// The status the application behind the proxy answers for `token`.
    static func iapStatus(_ server: TestServer, token: String) async throws -> Int {
        try await server.get(
            server.iapURL, headers: [("Authorization", "Bearer \(token)"), ("Accept", "application/json")]
        ).statusCode
    }

    /// How many revocation requests the server has counted.
    static func revocationCount(_ server: TestServer) async throws -> Int64 {
        try #require(
            JSONValue.parse(try await server.get("\(server.testControl)/stats").body)["revocations"]?.integerValue)
    }

    /// Revokes a refresh token without the tool, so that a test leaves no live token behind.
    static func revokeDirectly(_ server: TestServer, refreshToken: String, portalFace: Bool = true) async throws {
        let url = portalFace ? "\(server.portal)/sharing/rest/oauth2/revokeToken" : "\(server.issuer)/revoke_token/"
        let fields =
            portalFace
            ? [("client_id", server.clientID), ("auth_token", refreshToken)]
            : [("client_id", server.clientID), ("token", refreshToken)]
        _ = try await CurlHTTPClient().send(.form(URL(string: url)!, fields: fields))
    }

    /// Revokes what the store holds, without the tool.
    static func revokeEverything(_ server: TestServer, _ store: ScratchStore) async throws {
        for entry in try store.entries().values {
            guard let refresh = entry["refresh_token"]?.stringValue else { continue }
            try await revokeDirectly(
                server, refreshToken: refresh, portalFace: entry["kind"]?.stringValue == "oauth-user")
        }
    }

    /// Waits until the browser driver logged `count` exits in `log` (so that a kept profile is free again).
    static func waitForBrowsers(_ log: String, count: Int) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .seconds(40))
        while clock.now < deadline {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            if text.components(separatedBy: "] exit ").count - 1 >= count { return }
            try await Task.sleep(for: .milliseconds(200))
        }
        Issue.record("the browser driver did not finish \(count) run(s); see \(log)")
    }

    /// Checks that no token appears in the tool's output.
    static func expectNoSecret(
        _ secrets: [String], in result: ToolRunner.Result, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for secret in secrets where !secret.isEmpty {
            #expect(
                !result.stdout.contains(secret) && !result.stderr.contains(secret), "a token was printed",
                sourceLocation: sourceLocation)
        }
    }
}
