import Foundation
import Testing
@testable import PortalAuth

/// The IAP commands against Glewlwyd, an independent OpenID provider (issue 11), through headless Chromium on its
/// own login page. Serialized: each test drives a browser, and Glewlwyd's one client has one fixed redirect port.
@Suite(
    "Glewlwyd conformance: sign-in, prompts, rotation, logout", .serialized, .enabled(if: GlewlwydServer.isConfigured))
struct GlewlwydConformanceTests {
    // MARK: - Sign-in

    @Test(
        "IAP sign-in: PKCE S256, an RS256 ID token for this client from the discovered issuer, the granted scope stored"
    )
    func signIn() async throws {
        let server = try GlewlwydServer.current()
        let store = try ScratchStore()
        let result = try await server.login(server.iapConfig, store)
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.contains("code_challenge_method=S256") && result.stderr.contains("nonce="))
        let entry = try #require(try store.entries().values.first)
        let idToken = try IDToken(compact: try #require(entry["id_token"]?.stringValue))
        #expect(idToken.issuer == server.issuer)
        #expect(idToken.audiences.contains(server.clientID))
        #expect(idToken.algorithm == "RS256")
        #expect(entry["scopes"]?.arrayValue?.compactMap(\.stringValue) == ["openid"])
        let token = try #require(entry["access_token"]?.stringValue)
        #expect(!result.stderr.contains(token) && !result.stdout.contains(token))
    }

    @Test(
        "each prompt type signs in; prompt=none sends the stored ID token as id_token_hint, which Glewlwyd requires",
        arguments: ["login", "consent", "select_account", "none"])
    func prompt(_ prompt: String) async throws {
        let server = try GlewlwydServer.current()
        let store = try ScratchStore()
        let config = try server.configuration(in: store)
        let first = try await server.login(config, store)
        #expect(first.status == 0, "\(first)")
        // The same file, now with the prompt type: the browser profile keeps Glewlwyd's session.
        _ = try server.configuration(in: store) { $0["authorization_prompt_type"] = .string(prompt) }
        let again = try await server.login(config, store)
        #expect(again.status == 0, "prompt=\(prompt): \(again)")
        #expect(again.stderr.contains("prompt=\(prompt)"))
        #expect(!again.stderr.contains("id_token_hint"), "the ID token is never printed")
    }

    @Test(
        "a token response without id_token (a proxy drops it) is refused although openid was asked for: exit 65, nothing stored"
    )
    func missingIDToken() async throws {
        let server = try GlewlwydServer.current()
        let store = try ScratchStore()
        let proxy = try await FaultProxy.start(upstream: server.base)
        defer { proxy.stop() }
        try await proxy.arm("no-id-token")
        let config = try server.configuration(in: store) { $0["token_url"] = .string("\(proxy.base)/api/oidc/token") }
        let result = try await server.login(config, store)
        #expect(result.status == 65, "\(result)")
        #expect(result.stderr.contains("without an id_token although the scope openid was asked for"), "\(result)")
        #expect(try await proxy.state().faulted == 1)
        #expect((try? store.entries())?.isEmpty ?? true, "nothing stored")
    }

    @Test("a scope the user may not have is left out of the grant: the granted scope is stored, and refreshes go on")
    func narrowedGrant() async throws {
        let server = try GlewlwydServer.current()
        let store = try ScratchStore()
        let config = try server.configuration(in: store) {
            $0["scope"] = .array([.string("openid"), .string("g_admin")])
        }
        let result = try await server.login(config, store)
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.contains("scope=openid%20g_admin"))
        let entry = try #require(try store.entries().values.first)
        #expect(entry["scopes"]?.arrayValue?.compactMap(\.stringValue) == ["openid"], "what Glewlwyd granted")
        #expect(entry["requested_scopes"]?.arrayValue?.compactMap(\.stringValue) == ["openid", "g_admin"])
        let refreshed = try await ToolRunner.run(["refresh", "--iap", config], environment: server.environment(store))
        #expect(refreshed.status == 0, "\(refreshed)")
        #expect(try store.entries().values.first?["scopes"]?.arrayValue?.compactMap(\.stringValue) == ["openid"])
    }

    // MARK: - Refresh

    @Test(
        "rotation: each refresh gets a new refresh token; the old one is refused with HTTP 400 and an empty body, which is a sign-in needed (77), not a failing provider"
    )
    func rotation() async throws {
        let server = try GlewlwydServer.current()
        let store = try ScratchStore()
        let config = try server.configuration(in: store)
        #expect(try await server.login(config, store).status == 0)
        let before = try #require(try store.entries().values.first?["refresh_token"]?.stringValue)
        let refreshed = try await ToolRunner.run(["refresh", "--iap", config], environment: server.environment(store))
        #expect(refreshed.status == 0, "\(refreshed)")
        let after = try #require(try store.entries().values.first?["refresh_token"]?.stringValue)
        #expect(after != before, "Glewlwyd rotates refresh tokens")

        let replay = try await server.token([
            ("grant_type", "refresh_token"), ("client_id", server.clientID), ("refresh_token", before),
        ])
        #expect(replay.statusCode == 400, "the old refresh token is dead")

        // A store that missed the rotation (restored from a backup): the dead token is a refusal.
        // Aged past half its lifetime too, so that --min-valid 999999 refreshes the token just refreshed.
        let dayAgo = Int64(Date().timeIntervalSince1970) - 86400
        try await SignOutTests.editEntries(store) {
            $0["refresh_token"] = .string(before)
            $0["access_token_issued_at"] = .integer(dayAgo)
        }
        let token = try await ToolRunner.run(
            ["token", "--iap", config, "--min-valid", "999999"], environment: server.environment(store))
        #expect(token.status == 77, "\(token)")
        #expect(
            token.stderr.contains("no longer accepted") && token.stderr.contains("portal-auth iap login --config"),
            "\(token)")
        #expect(!token.stderr.contains("check the portal or token URL"))
        #expect(!token.stderr.contains(before) && !token.stderr.contains(after))

        let interactive = try await ToolRunner.run(
            [
                "token", "--iap", config, "--min-valid", "999999", "--interactive", "--browser-command", server.browser,
                "--timeout", "90",
            ],
            environment: server.environment(store), timeout: .seconds(120))
        #expect(interactive.status == 0, "--interactive signs in again: \(interactive)")
        #expect(interactive.stdoutLines.count == 1)
    }

    @Test("concurrent refreshes share one rotation: every process succeeds and the stored refresh token still works")
    func concurrentRefreshes() async throws {
        let server = try GlewlwydServer.current()
        let store = try ScratchStore()
        let config = try server.configuration(in: store)
        #expect(try await server.login(config, store).status == 0)
        let environment = server.environment(store)
        let results = try await withThrowingTaskGroup(of: ToolRunner.Result.self) { group in
            for _ in 0..<6 {
                group.addTask {
                    try await ToolRunner.run(
                        ["token", "--iap", config, "--min-valid", "999999"], environment: environment,
                        timeout: .seconds(60))
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for result in results { #expect(result.status == 0, "\(result)") }
        let last = try await ToolRunner.run(["refresh", "--iap", config], environment: environment)
        #expect(last.status == 0, "the chain of refresh tokens is intact: \(last)")
    }

    // MARK: - Sign-in problems found at once

    @Test("a redirect port Glewlwyd does not know: its error answer is shown at once, with what to check")
    func unregisteredRedirect() async throws {
        let server = try GlewlwydServer.current()
        let store = try ScratchStore()
        let (socket, port) = try SignInTests.occupyLoopbackPort()
        close(socket)
        let config = try server.configuration(in: store) {
            $0["redirect_url"] = .string("http://127.0.0.1:\(port)/callback")
        }
        let result = try await ToolRunner.run(
            ["iap", "login", "--config", config, "--browser-command", "true", "--timeout", "3"],
            environment: server.environment(store), timeout: .seconds(60))
        #expect(result.status == 75, "\(result)")
        #expect(result.stderr.contains("seems to reject this sign-in request: it answers HTTP 403"), "\(result)")
        #expect(result.stderr.contains("press Ctrl-C and check the client ID"))
    }

    @Test("request over plain http to a *.localhost name (loopback, RFC 6761 §6.3) is sent like one to localhost")
    func localhostSubdomain() async throws {
        let server = try GlewlwydServer.current()
        let store = try ScratchStore()
        let port = try #require(URL(string: server.base)?.port)
        let result = try await ToolRunner.run(
            ["request", "http://idp.localhost:\(port)/api/oidc/.well-known/openid-configuration"],
            environment: ["PORTAL_AUTH_STORE": store.path])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("\"issuer\":\"\(server.issuer)\""), "\(result)")
    }

    // MARK: - Logout

    @Test(
        "iap logout: Glewlwyd confirms the end of the session but refuses the public client's revocation (401): both are said, exit 69"
    )
    func logout() async throws {
        let server = try GlewlwydServer.current()
        let store = try ScratchStore()
        let config = try server.configuration(in: store)
        #expect(try await server.login(config, store).status == 0)
        let refresh = try #require(try store.entries().values.first?["refresh_token"]?.stringValue)
        let result = try await ToolRunner.run(
            ["iap", "logout", "--config", config, "--browser-command", server.browser, "--timeout", "60"],
            environment: server.environment(store), timeout: .seconds(90))
        #expect(result.status == 69, "\(result)")
        #expect(result.stderr.contains("The identity provider confirmed the end of the browser session"), "\(result)")
        #expect(
            result.stderr.contains("the tokens were NOT revoked") && result.stderr.contains("HTTP 401"), "\(result)")
        #expect(!result.stderr.contains("confirmed the sign-out"))
        #expect(try store.entries().isEmpty)
        #expect(!result.stderr.contains(refresh))

        // The session is gone: a silent sign-in now needs interaction.
        let silent = try server.configuration(in: store, name: "silent.json") {
            $0["authorization_prompt_type"] = .string("none")
        }
        let after = try await server.login(silent, store)
        #expect(after.status == 77, "\(after)")
        #expect(after.stderr.contains("interaction_required") || after.stderr.contains("login_required"), "\(after)")
    }

    @Test("iap logout without an answer: exit 75, and the printed URL is offered, not promised")
    func logoutUnconfirmed() async throws {
        let server = try GlewlwydServer.current()
        let store = try ScratchStore()
        let config = try server.configuration(in: store)
        #expect(try await server.login(config, store).status == 0)
        let result = try await ToolRunner.run(
            ["iap", "logout", "--config", config, "--browser-command", "true", "--timeout", "2"],
            environment: server.environment(store), timeout: .seconds(60))
        #expect(result.status == 75, "\(result)")
        #expect(!result.stderr.contains("to finish signing out"))
        // What is offered for opening by hand: the private page carrying the ID token (issue 23), gone at the end.
        let page = try #require(Self.launchPage(in: result.stderr), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: page.path), "the page is removed when the logout ends")
        #expect(!result.stderr.contains("id_token_hint"))
    }

    /// The `file:` page `iap logout` prints for opening by hand.
    static func launchPage(in stderr: String) -> URL? {
        stderr.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.first { $0.hasPrefix("file:///") }
            .flatMap(URL.init(string:))
    }

    @Test(
        "iap logout opened by hand: the printed private page carries id_token_hint, and Glewlwyd ends the session through it (issue 23)"
    )
    func logoutByHand() async throws {
        let server = try GlewlwydServer.current()
        let store = try ScratchStore()
        let config = try server.configuration(in: store)
        #expect(try await server.login(config, store).status == 0)
        let entry = try #require(try store.entries().values.first)
        let idToken = try #require(entry["id_token"]?.stringValue)
        let refresh = try #require(entry["refresh_token"]?.stringValue)
        // No browser opens by itself: the person opens what the tool prints.
        let tool = try BackgroundTool.start(
            ["iap", "logout", "--config", config, "--browser-command", "true", "--timeout", "90"],
            environment: server.environment(store))
        // A test that stops early must not leave the tool listening on Glewlwyd's one fixed redirect port.
        defer { if tool.process.isRunning { tool.process.terminate() } }
        let said = tool.stderr(until: "Waiting for the identity provider", timeout: .seconds(60))
        let page = try #require(Self.launchPage(in: said), "\(said)")
        #expect(!said.contains(idToken) && !said.contains(refresh))
        let mode = try FileManager.default.attributesOfItem(atPath: page.path)[.posixPermissions] as? Int
        #expect(mode == 0o600, "a private page")
        #expect(try String(contentsOf: page, encoding: .utf8).contains("id_token_hint="))

        // The browser the person signed in with (its profile keeps Glewlwyd's session) opens the page.
        let environment = server.environment(store)
        let browserStatus = try await BlockingWork.run {
            try TestBrowserRun.run(page.absoluteString, environment: environment)
        }
        #expect(browserStatus == 0, "the browser reached the redirect back")

        let rest = readOutput(of: tool.errors, until: "\u{0}", timeout: .seconds(90))
        let process = tool.process
        try await BlockingWork.run { process.waitUntilExit() }
        #expect(rest.contains("The identity provider confirmed the end of the browser session"), "\(said)\(rest)")
        #expect(
            tool.process.terminationStatus == 69,
            "confirmed; Glewlwyd refuses the public client's revocation: \(said)\(rest)")
        #expect(!FileManager.default.fileExists(atPath: page.path), "the page is removed when the logout ends")

        // The session is gone: a silent sign-in now needs interaction.
        let silent = try server.configuration(in: store, name: "silent.json") {
            $0["authorization_prompt_type"] = .string("none")
        }
        let after = try await server.login(silent, store)
        #expect(after.status == 77, "\(after)")
    }

    @Test(
        "sign-out with two IAP sign-ins of one Glewlwyd session on the same fixed redirect port: one browser logout, both confirmed"
    )
    func signOutSharedPort() async throws {
        let server = try GlewlwydServer.current()
        let store = try ScratchStore()
        let first = try server.configuration(in: store, name: "first.json")
        #expect(try await server.login(first, store).status == 0)
        // A second sign-in on the same provider, client and fixed redirect port: Glewlwyd has one client and one
        // user, and a copy of the same file is the same sign-in, so the entry is copied as another user's (the
        // store key names provider, client and user).
        let (key, entry) = try #require(try store.entries().first)
        let user = try #require(key.lastIndex(of: "|"))
        let file = CredentialStoreFile(location: StoreLocation(path: store.path))
        try await file.update { snapshot in
            guard var copy = entry.objectValue else { return }
            copy["username"] = .string("second-user")
            copy["configuration_file"] = .string(store.directory.appendingPathComponent("second.json").path)
            snapshot.set(copy, for: key[..<user] + "|second-user")
        }
        #expect(try store.entries().count == 2)
        let result = try await ToolRunner.run(
            ["sign-out", "--browser-command", server.browser, "--timeout", "20"],
            environment: server.environment(store), timeout: .seconds(150))
        #expect(
            !result.stderr.contains("another program is using port")
                && !result.stdout.contains("another program is using port"), "\(result)")
        // Both sign-ins are of Glewlwyd's one browser session (their ID tokens carry its `sid`): one browser logout
        // ends it, and both are confirmed — the second does not wait out the time for a redirect that never comes
        // (issue 23).
        let lines = result.stdout.split(separator: "\n").filter { $0.contains("the IAP configuration") }
        #expect(lines.count == 2, "\(result)")
        #expect(lines.allSatisfy { $0.contains("confirmed the end of the browser session") }, "\(result)")
        #expect(!result.stdout.contains("no confirmation from the identity provider"), "\(result)")
        let log = try String(contentsOf: store.directory.appendingPathComponent("browser.log"), encoding: .utf8)
        let runs = log.split(separator: "\n").filter { $0.contains("] open ") }.count
        #expect(runs == 2, "one sign-in, then one logout for the one provider session: \(log)")
        #expect(result.stdout.contains("NOT revoked"), "Glewlwyd refuses the public client's revocation: \(result)")
        #expect(result.status == 69, "\(result)")
        #expect(try store.entries().isEmpty)
    }
}
