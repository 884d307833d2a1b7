import Foundation
import Testing
@testable import PortalAuth

/// Commands the tool prints for the person to run work as printed; sign-in names, `refresh --format`, a refused
/// refresh token in `status`, and `request`'s final newline, against the test server.
@Suite("printed commands and script output against the server", .serialized, .enabled(if: TestServer.isConfigured))
struct SuggestedCommandTests {
    let control: TestControl
    var server: TestServer { control.server }

    init() async throws { control = try await .prepared() }

    @Test("after revoke, token prints sign-in commands that work as printed (the client ID is kept)")
    func suggestionsAfterRevoke() async throws {
        let store = try ScratchStore()
        try await store.signIn(.portal, server: server)
        let environment = ["PORTAL_AUTH_STORE": store.path]
        let revoked = try await ToolRunner.run(["revoke", "--portal", server.portal], environment: environment)
        #expect(revoked.status == 0, "\(revoked)")

        let token = try await ToolRunner.run(["token", "--portal", server.portal], environment: environment)
        #expect(token.status == 77, "\(token)")
        let printed = token.stderrLines.filter { $0.hasPrefix("    portal-auth ") }.map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        #expect(printed.count == 2, "a login command and the --interactive one: \(token)")
        let interactive = try #require(printed.first { $0.hasSuffix("--interactive") })
        #expect(interactive.contains("--client-id \(server.clientID)"), "\(interactive)")

        // Run as printed; the browser is the test's (as $BROWSER), on a display the tool believes it has.
        let words = CommandBrowserOpener.splitWords(interactive)
        let browser = [
            "BROWSER": server.browser, "DISPLAY": ":99", "SSH_CONNECTION": "", "SSH_CLIENT": "", "SSH_TTY": "",
            "PORTAL_AUTH_TEST_BROWSER_TIMEOUT": "60",
        ]
        let again = try await ToolRunner.run(
            Array(words.dropFirst()), environment: environment.merging(browser) { $1 }, timeout: .seconds(120))
        #expect(again.status == 0, "\(again)")
        let newToken = try #require(again.stdoutLines.first)
        #expect(try await server.portalSelf(token: newToken)["user"]?["username"]?.stringValue == "alice")

        let login = try #require(printed.first { $0.contains(" login ") })
        _ = try await ToolRunner.run(["revoke"], environment: environment)
        let loggedIn = try await ToolRunner.run(
            Array(CommandBrowserOpener.splitWords(login).dropFirst()), environment: environment.merging(browser) { $1 },
            timeout: .seconds(120))
        #expect(loggedIn.status == 0, "\(loggedIn)")
    }

    @Test("login --name names the sign-in; refresh --format json prints the common token shape")
    func namedRefresh() async throws {
        let store = try ScratchStore()
        try await store.signIn(.portal, server: server, extra: ["--name", "main"])
        let environment = ["PORTAL_AUTH_STORE": store.path]
        let refreshed = try await ToolRunner.run(
            ["refresh", "--name", "main", "--format", "json"], environment: environment)
        #expect(refreshed.status == 0, "\(refreshed)")
        let json = try JSONValue.parse(Data(refreshed.stdout.utf8))
        #expect(
            TokenJSONShape.problems(in: json, kind: "oauth-user").isEmpty,
            "\(TokenJSONShape.problems(in: json, kind: "oauth-user"))")
        #expect(json["token"]?.stringValue == (try store.field("access_token", of: .portal)))
        let header = try await ToolRunner.run(["refresh", "--format", "header"], environment: environment)
        #expect(header.stdout.hasPrefix("X-Esri-Authorization: Bearer "), "\(header)")
    }

    @Test("a refresh token the provider refused: token exits 77 and status says refused, exit 77")
    func refusedRefreshToken() async throws {
        let store = try ScratchStore()
        try await store.signIn(.portal, server: server)
        let environment = ["PORTAL_AUTH_STORE": store.path]
        try await control.expireRefreshTokens()
        try await store.expireAccessToken(.portal, control: control)
        let token = try await ToolRunner.run(["token"], environment: environment)
        #expect(token.status == 77, "\(token)")
        let status = try await ToolRunner.run(["status"], environment: environment)
        #expect(status.status == 77, "\(status)")
        let line = try #require(status.stdoutLines.first { $0.contains("refresh token:") })
        #expect(line.contains("refused by the identity provider") && !line.contains("valid until"), "\(line)")
        #expect(try await ToolRunner.run(["status", "--quiet"], environment: environment).status == 77)
    }

    @Test("request ends a text body without a final newline with one")
    func requestNewline() async throws {
        let store = try ScratchStore()
        try await store.signIn(.portal, server: server)
        let url = "\(server.portal)/sharing/rest/portals/self?f=json"
        let token = try #require(try store.field("access_token", of: .portal))
        let raw = try await server.get(url, headers: [("X-Esri-Authorization", "Bearer \(token)")]).body
        try #require(raw.last != UInt8(ascii: "\n"), "the server's body must end without a newline for this test")
        let result = try await ToolRunner.run(["request", url], environment: ["PORTAL_AUTH_STORE": store.path])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.hasSuffix("}\n"), "\(result)")
        #expect(try JSONValue.parse(Data(result.stdout.utf8))["user"]?["username"]?.stringValue == "alice")
    }
}
