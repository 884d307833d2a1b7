import Foundation
import Testing
@testable import PortalAuth

/// Every command that may open a browser takes `login`'s remote path over SSH (issue 28, point 1): `token
/// --interactive`, `request --interactive` and `iap logout` never run `xdg-open` in an SSH session without a
/// forwarded display; without a terminal the first two fail at once (exit 64) with the command to run on one, and
/// `iap logout` revokes what needs no browser and names the browser session that stays (issue 45, exit 69), and on a terminal
/// (a pseudo-terminal through `script`) the address the browser ends on is pasted back. And a browser command's own
/// output never reaches the tool's (point 4).
@Suite("Remote paths of every command", .serialized, .enabled(if: TestServer.isConfigured))
struct RemoteEveryCommandTests {
    /// An SSH session without a forwarded display.
    static let ssh = ["SSH_CONNECTION": "10.0.0.2 52000 10.0.0.1 22", "SSH_TTY": "/dev/pts/9"]

    /// Runs `arguments` without a terminal over SSH and checks the immediate exit 64 with the command to run.
    private func expectFailsAtOnce(_ arguments: [String], store: ScratchStore, mentions: String) async throws -> String
    {
        let tool = try HeadlessTool(arguments, environment: Self.ssh.merging(["PORTAL_AUTH_STORE": store.path]) { $1 })
        defer { tool.stop() }
        // A hang guard far below --timeout 300: the old behaviour (xdg-open, then the wait) is killed and fails here.
        let status = try await BlockingWork.run { tool.finish(timeout: .seconds(60)) }
        let text = tool.stderr
        #expect(status == 64, "\(text)")
        #expect(text.contains("SSH session without a forwarded display"), "\(text)")
        #expect(text.contains(mentions), "\(text)")
        // The command line again, ready to paste (a URL with `?` in quotes).
        let quoted = arguments.map { $0.contains("?") ? "'\($0)'" : $0 }
        #expect(text.contains("Run this on a terminal:\n    portal-auth \(quoted.joined(separator: " "))"), "\(text)")
        #expect(!text.contains("not found") && !text.contains("exited with status"), "no browser command was run")
        return text
    }

    @Test("token --interactive over SSH without a terminal: exit 64 at once, no browser, the command to run")
    func tokenWithoutTerminal() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        _ = try await expectFailsAtOnce(
            ["token", "--portal", server.portal, "--client-id", server.clientID, "--interactive", "--timeout", "300"],
            store: store, mentions: "no terminal to paste")
    }

    @Test("request --interactive over SSH without a terminal: exit 64 at once, no browser, the command to run")
    func requestWithoutTerminal() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        _ = try await expectFailsAtOnce(
            [
                "request", "\(server.portal)/sharing/rest/portals/self?f=json", "--portal", server.portal,
                "--client-id", server.clientID,
                "--interactive", "--timeout", "300",
            ],
            store: store, mentions: "no terminal to paste")
    }

    @Test(
        "token --interactive over SSH on a terminal: the URL and a paste prompt, no browser; the pasted address signs in"
    )
    func tokenOnTerminal() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        let finalFile = store.directory.appendingPathComponent("final-url").path
        let tool = try TerminalTool(
            ["token", "--portal", server.portal, "--client-id", server.clientID, "--interactive", "--timeout", "120"],
            environment: Self.ssh.merging(["PORTAL_AUTH_STORE": store.path]) { $1 })
        var (text, url) = try tool.authorizationURL(
            until: "Paste that address here and press Enter:", portal: server.portal)
        let browser = try TestBrowserRun.run(
            url,
            environment: [
                "PORTAL_AUTH_TEST_BROWSER_REMOTE": "1", "PORTAL_AUTH_TEST_BROWSER_FINAL_URL_FILE": finalFile,
            ])
        #expect(browser == 0)
        tool.type(
            try String(contentsOfFile: finalFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines))
        let (status, rest) = try await tool.finish()
        text += rest
        #expect(status == 0, "\(text)")
        #expect(
            text.contains("No browser is opened here: this is an SSH session without a forwarded display"), "\(text)")
        #expect(!text.contains("if one does not open by itself"))
        let token = try #require(try store.field("access_token", of: .portal))
        #expect(text.contains(token), "the token is printed")
        try await SignOutTests.revokeEverything(server, store)
    }

    @Test(
        "iap logout over SSH without a terminal: exit 69 at once without a browser, the sign-in deleted, the browser session and the unrevoked refresh token named (issue 45)"
    )
    func iapLogoutWithoutTerminal() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        let tokens = try await SignOutTests.iapLogin(server, store)
        let tool = try HeadlessTool(
            ["iap", "logout", "--config", server.iapConfig, "--timeout", "300"],
            environment: Self.ssh.merging(["PORTAL_AUTH_STORE": store.path]) { $1 })
        defer { tool.stop() }
        // A hang guard far below --timeout 300: waiting for a browser that cannot come fails here.
        let status = try await BlockingWork.run { tool.finish(timeout: .seconds(60)) }
        let text = tool.stderr
        #expect(status == 69, "\(text)")
        #expect(
            text.contains(
                "no browser logout could run here (this is an SSH session without a forwarded display), so the browser session at the identity provider stays"
            ), "\(text)")
        // The bundled server advertises no revocation endpoint: the refresh token left valid is named.
        #expect(
            text.contains("the tokens were NOT revoked (the identity provider offers no revocation endpoint)"),
            "\(text)")
        #expect(!text.contains("not found") && !text.contains("exited with status"), "no browser command was run")
        #expect(try store.entries().isEmpty, "the sign-in is deleted, and that is said")
        try await SignOutTests.revokeDirectly(server, refreshToken: tokens.refresh, portalFace: false)
    }

    @Test(
        "sign-out with no display and no terminal: the logout that cannot run is told in the tool's options, never the library's API (issue 45)"
    )
    func signOutWithoutBrowserNamesOptions() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        let tokens = try await SignOutTests.iapLogin(server, store)
        let result = try await ToolRunner.run(
            ["sign-out", "--yes", "--timeout", "60"], environment: ["PORTAL_AUTH_STORE": store.path],
            removing: ["DISPLAY", "WAYLAND_DISPLAY", "BROWSER", "SSH_CONNECTION", "SSH_CLIENT", "SSH_TTY"],
            timeout: .seconds(60))
        let text = result.stdout + result.stderr
        #expect(result.status == 69, "\(result)")
        #expect(text.contains("there is no display"), "\(text)")
        for name in ["SignInSettings", "takePastedAddresses", "SignInMethod", "SignInObserver"] {
            #expect(!text.contains(name), "a library name in a tool message: \(name)")
        }
        #expect(try store.entries().isEmpty)
        try await SignOutTests.revokeDirectly(server, refreshToken: tokens.refresh, portalFace: false)
    }

    @Test(
        "a browser command that writes to its stdout and stderr: nothing of it reaches the tool's; --format json stays JSON"
    )
    func browserOutputGoesNowhere() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        let noisy = "sh -c 'echo NOISE-ON-STDOUT; echo NOISE-ON-STDERR >&2; exec \"$0\" \"$@\"' '\(server.browser)'"
        let result = try await ToolRunner.run(
            [
                "token", "--portal", server.portal, "--client-id", server.clientID, "--interactive", "--format", "json",
                "--browser-command", noisy, "--timeout", "90",
            ],
            environment: ["PORTAL_AUTH_STORE": store.path, "PORTAL_AUTH_TEST_BROWSER_TIMEOUT": "60"],
            timeout: .seconds(120))
        #expect(result.status == 0, "\(result)")
        #expect(!result.stdout.contains("NOISE") && !result.stderr.contains("NOISE"), "\(result)")
        let json = try JSONValue.parse(Data(result.stdout.utf8))
        #expect(json["kind"]?.stringValue == "oauth-user")
        try await SignOutTests.revokeEverything(server, store)
    }

    @Test("a portal that is down: exit 69 at once with the reason, and no browser tab (issue 28, point 5)")
    func serverDownBeforeBrowser() async throws {
        let store = try ScratchStore()
        let opened = store.directory.appendingPathComponent("opened").path
        let result = try await ToolRunner.run(
            [
                "token", "--portal", "http://127.0.0.1:9/arcgis", "--client-id", "app", "--interactive",
                "--browser-command", "sh -c 'echo \"$1\" > \(opened)' sh", "--timeout", "300",
            ],
            environment: ["PORTAL_AUTH_STORE": store.path], timeout: .seconds(60))
        #expect(result.status == 69, "\(result)")
        #expect(result.stderr.contains("127.0.0.1:9"), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: opened), "the browser never started")
    }

    @Test(
        "on a terminal of 80 columns the tool's messages are wrapped at spaces, never inside a word (issue 28, point 6)"
    )
    func wrappedAt80Columns() async throws {
        let store = try ScratchStore()
        let arguments = [
            "token", "--portal", "http://127.0.0.1:9/arcgis", "--client-id", "app", "--interactive", "--timeout", "300",
        ]
        let tool = try TerminalTool(
            arguments, environment: Self.ssh.merging(["PORTAL_AUTH_STORE": store.path, "COLUMNS": "80"]) { $1 })
        let (status, text) = try await tool.finish()
        #expect(status == 69, "\(text)")
        // "\r\n" is one Character in Swift: the terminal's line ends and the status line's erasure go first.
        let lines = text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\u{1B}[2K", with: "")
            .replacingOccurrences(of: "\r", with: "").components(separatedBy: "\n")
        for line in lines where line.count > 80 {
            #expect(
                line.hasPrefix(" ") || !line.contains(" "),
                "a line longer than 80 columns that could have been wrapped: \(line)")
        }
        #expect(lines.contains { $0.count > 40 } && lines.filter { !$0.isEmpty }.count > 2, "\(text)")
        // Without a terminal (a log, a script) nothing is wrapped.
        let plain = try await ToolRunner.run(
            arguments, environment: Self.ssh.merging(["PORTAL_AUTH_STORE": store.path, "COLUMNS": "80"]) { $1 })
        let message = try #require(
            plain.stderr.split(separator: "\n").first { $0.hasPrefix("portal-auth: error: ") }, "\(plain)")
        #expect(message.count > 80, "without a terminal the message stays on one line")
        // Joined again at the breaks, the terminal's message is whole: no word was cut.
        let joined = lines.filter { !$0.isEmpty }.joined(separator: " ")
        #expect(
            joined.contains(
                "Could not connect to http://127.0.0.1:9/arcgis/sharing/rest/oauth2/authorize: Failed to connect to 127.0.0.1 port 9"
            ), "\(text)")
        #expect(
            joined.contains(
                "Check that the server is up and reachable, and the proxy variables (https_proxy, no_proxy)."),
            "\(text)")
    }
}
