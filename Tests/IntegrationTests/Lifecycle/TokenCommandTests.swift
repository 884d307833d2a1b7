import Foundation
import Glibc
import Testing
@testable import PortalAuth

/// `portal-auth token` and `portal-auth refresh` as scripts see them: output formats, picking a sign-in by
/// URL, what happens with nothing stored or a corrupted store, and that no token leaks to standard error.
@Suite("token and refresh commands", .serialized, .enabled(if: TestServer.isConfigured))
struct TokenCommandTests {
    let control: TestControl
    var server: TestServer { control.server }

    init() async throws { control = try await .prepared() }

    // MARK: - Formats

    @Test("plain, header and json for a portal sign-in; the header works as is")
    func portalFormats() async throws {
        let store = try ScratchStore()
        try await store.signIn(.portal, server: server)
        let token = try #require(try store.field("access_token", of: .portal))
        let environment = ["PORTAL_AUTH_STORE": store.path]
        let selector = SignInKind.portal.selector(server)

        let plain = try await ToolRunner.run(["token"] + selector, environment: environment)
        #expect(plain.status == 0 && plain.stdout == token + "\n" && plain.stderr.isEmpty, "\(plain)")

        let header = try await ToolRunner.run(["token"] + selector + ["--format", "header"], environment: environment)
        #expect(header.stdout == "X-Esri-Authorization: Bearer \(token)\n")
        let line = header.stdout.trimmingCharacters(in: .newlines)
        let colon = try #require(line.firstIndex(of: ":"))
        let response = try await server.get(
            "\(server.portal)/sharing/rest/portals/self?f=json",
            headers: [
                (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            ])
        #expect(try JSONValue.parse(response.body)["user"]?["username"]?.stringValue == "alice")

        let renamed = try await ToolRunner.run(
            ["token"] + selector + ["--format", "header", "--header-name", "Authorization"], environment: environment)
        #expect(renamed.stdout == "Authorization: Bearer \(token)\n")

        let json = try await ToolRunner.run(["token"] + selector + ["--format", "json"], environment: environment)
        #expect(json.status == 0)
        let object = try JSONValue.parse(Data(json.stdout.utf8))
        #expect(object["token"]?.stringValue == token)
        #expect(object["token_type"]?.stringValue == "Bearer")
        #expect(object["kind"]?.stringValue == "oauth-user")
        #expect(object["username"]?.stringValue == "alice")
        let left = try #require(object["expires_in"]?.integerValue)
        #expect(left > 3000 && left <= 3600)
        let expiry = try #require(object["expires_at"]?.stringValue)
        let parsed = try #require(try? Date(expiry, strategy: .iso8601))
        #expect(abs(parsed.timeIntervalSinceNow - Double(left)) < 5)
        #expect(object["id_token"] == nil)

        let noID = try await ToolRunner.run(["token"] + selector + ["--id-token"], environment: environment)
        #expect(noID.status == 64, "\(noID)")
        #expect(noID.stderr.contains("no ID token"))
        #expect(noID.leaksNone(of: [token]))
    }

    @Test("IAP: Authorization header, json with the ID token, --id-token prints the ID token")
    func iapFormats() async throws {
        let store = try ScratchStore()
        try await store.signIn(.iap, server: server)
        let token = try #require(try store.field("access_token", of: .iap))
        let idToken = try #require(try store.field("id_token", of: .iap))
        let environment = ["PORTAL_AUTH_STORE": store.path]
        let selector = SignInKind.iap.selector(server)

        let header = try await ToolRunner.run(["token"] + selector + ["--format", "header"], environment: environment)
        #expect(header.stdout == "Authorization: Bearer \(token)\n")

        let json = try await ToolRunner.run(["token"] + selector + ["--format", "json"], environment: environment)
        let object = try JSONValue.parse(Data(json.stdout.utf8))
        #expect(object["kind"]?.stringValue == "iap")
        #expect(object["token"]?.stringValue == token)
        #expect(object["id_token"]?.stringValue == idToken)
        #expect((object["id_token_expires_in"]?.integerValue ?? 0) > 3000)
        #expect(object["id_token_expires_at"]?.stringValue != nil)

        let id = try await ToolRunner.run(["token"] + selector + ["--id-token"], environment: environment)
        #expect(id.stdout == idToken + "\n")
        let decoded = try IDToken(compact: idToken)
        #expect(decoded.audiences.contains(server.clientID) && decoded.issuer == server.issuer)
        #expect(id.stderr.isEmpty && json.stderr.isEmpty && header.stderr.isEmpty)
    }

    // MARK: - Choosing the sign-in

    @Test("--url picks the sign-in whose portal or proxied hosts cover the URL")
    func urlSelection() async throws {
        let store = try ScratchStore()
        try await store.signIn(.portal, server: server)
        try await store.signIn(.iap, server: server)
        let portalToken = try store.field("access_token", of: .portal)
        let iapToken = try store.field("access_token", of: .iap)
        #expect(portalToken != iapToken)
        let environment = ["PORTAL_AUTH_STORE": store.path]

        let portal = try await ToolRunner.run(
            ["token", "--url", "\(server.portal)/sharing/rest/portals/self"], environment: environment)
        #expect(portal.stdout == (portalToken ?? "") + "\n", "\(portal)")
        // A host behind the proxy gets the IAP sign-in's ID token, as `request` sends it (the SDK's choice).
        let iap = try await ToolRunner.run(
            ["token", "--url", server.iapURL + "reports/today"], environment: environment)
        #expect(iap.stdout == (try store.field("id_token", of: .iap) ?? "") + "\n", "\(iap)")
        let iapAccess = try await ToolRunner.run(
            ["token", "--url", server.iapURL, "--proxy-token", "access"], environment: environment)
        #expect(iapAccess.stdout == (iapToken ?? "") + "\n", "\(iapAccess)")
        let none = try await ToolRunner.run(
            ["token", "--url", "https://unrelated.example/arcgis/rest"], environment: environment)
        #expect(none.status == 77)
        #expect(none.stderr.contains("no stored portal or IAP sign-in covers https://unrelated.example/arcgis/rest"))
        #expect(none.stderr.contains("portal-auth login") && none.stderr.contains("portal-auth iap login"))
        #expect(none.stdout.isEmpty)
    }

    @Test("nothing stored: exit 77 with the exact command to run (and --store when one was given), no browser")
    func nothingStored() async throws {
        let store = try ScratchStore()
        let portal = try await ToolRunner.run(
            [
                "token", "--portal", server.portal, "--client-id", server.clientID, "--store", store.path,
                "--browser-command", "false",
            ])
        #expect(portal.status == 77, "\(portal)")
        #expect(
            portal.stderr.contains(
                "no stored sign-in for the portal \(server.portal) with client ID \(server.clientID)"))
        #expect(
            portal.stderr.contains(
                "    portal-auth login --portal \(server.portal) --client-id \(server.clientID) --store \(store.path)\n"
            ))
        #expect(portal.stderr.contains("--interactive"))
        #expect(!portal.stderr.contains("Open this URL"), "never a sign-in without --interactive")
        #expect(portal.stdout.isEmpty)

        let iap = try await ToolRunner.run(
            ["token", "--iap", server.iapConfig], environment: ["PORTAL_AUTH_STORE": store.path])
        #expect(iap.status == 77)
        #expect(iap.stderr.contains("    portal-auth iap login --config \(server.iapConfig)\n"))

        let refresh = try await ToolRunner.run(
            ["refresh", "--iap", server.iapConfig], environment: ["PORTAL_AUTH_STORE": store.path])
        #expect(refresh.status == 77)
        #expect(!FileManager.default.fileExists(atPath: store.path), "nothing was written")
    }

    @Test("--interactive signs in when nothing is stored, and again when the refresh token died; otherwise no browser")
    func interactive() async throws {
        let store = try ScratchStore()
        let environment = ["PORTAL_AUTH_STORE": store.path, "PORTAL_AUTH_TEST_BROWSER_TIMEOUT": "60"]
        let first = try await ToolRunner.run(
            ["token"] + SignInKind.portal.selector(server) + [
                "--interactive", "--browser-command", server.browser, "--timeout", "90",
            ],
            environment: environment, timeout: .seconds(120))
        #expect(first.status == 0, "\(first)")
        let token = try #require(try store.field("access_token", of: .portal))
        #expect(first.stdout == token + "\n", "only the token on stdout; the sign-in talks on stderr")
        #expect(first.stderr.contains("Signed in as alice"))
        let second = try await ToolRunner.run(
            ["token"] + SignInKind.portal.selector(server) + ["--browser-command", "false"], environment: environment)
        #expect(second.stdout == first.stdout)

        // A dead refresh token with --interactive: a new sign-in instead of exit 77.
        try await control.expireRefreshTokens()
        try await store.expireAccessToken(.portal, control: control)
        let third = try await ToolRunner.run(
            ["token"] + SignInKind.portal.selector(server) + [
                "--interactive", "--browser-command", server.browser, "--timeout", "90",
            ],
            environment: environment, timeout: .seconds(120))
        #expect(third.status == 0, "\(third)")
        #expect(third.stderr.contains("no longer accepted") && third.stderr.contains("signing in again"))
        #expect(third.stdout == (try store.field("access_token", of: .portal) ?? "") + "\n")
        #expect(third.stdout != first.stdout)
    }

    @Test(
        "command-line mistakes are usage errors (64)",
        arguments: [
            ["token", "--name", "not a name"],
            ["token", "--portal", "https://a.example", "--iap", "x.json"],
            ["token", "--client-id", "abc", "--iap", "x.json"],
            ["token", "--portal", "not a url"],
            ["token", "--portal", "https://a.example", "--min-valid", "-1"],
            ["token", "--portal", "https://a.example", "--format", "yaml"],
            ["token", "--portal", "https://a.example", "--header-name", "X-Token"],
            ["refresh", "--url", "not a url"],
        ])
    func usageErrors(arguments: [String]) async throws {
        let result = try await ToolRunner.run(arguments)
        #expect(result.status == 64, "\(arguments): \(result)")
        #expect(result.stdout.isEmpty)
    }

    // MARK: - A corrupted store

    @Test(
        "a corrupted store: exit 65 naming the file with advice, the file left untouched",
        arguments: ["token", "refresh"])
    func corruptedStore(command: String) async throws {
        let store = try ScratchStore()
        let directory = (store.path as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let garbage = Data(
            #"{"format": "portal-auth-credentials", "version": 1, "entries": {"oauth-user|x": {"access_token": "half-writ"#
                .utf8)
        try garbage.write(to: URL(fileURLWithPath: store.path))
        chmod(store.path, 0o600)

        let result = try await ToolRunner.run(
            [command] + SignInKind.portal.selector(server), environment: ["PORTAL_AUTH_STORE": store.path])
        #expect(result.status == 65, "\(result)")
        #expect(result.stderr.contains(store.path))
        #expect(result.stderr.contains("corrupted") && result.stderr.contains("mv "))
        #expect(!result.stderr.contains("half-writ"), "no file content in the message")
        #expect(try Data(contentsOf: URL(fileURLWithPath: store.path)) == garbage)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory) == ["credentials.json"],
            "not moved aside, nothing added")
    }

    // MARK: - refresh

    @Test("refresh forces one request, prints only a status line, and --print-token prints the new token")
    func refreshCommand() async throws {
        let store = try ScratchStore()
        try await store.signIn(.portal, server: server)
        let old = try store.field("access_token", of: .portal)
        let environment = ["PORTAL_AUTH_STORE": store.path]
        try await control.resetStats()

        let quiet = try await ToolRunner.run(["refresh"] + SignInKind.portal.selector(server), environment: environment)
        #expect(quiet.status == 0, "\(quiet)")
        #expect(quiet.stdout.isEmpty)
        #expect(quiet.stderr.hasPrefix("Refreshed the tokens for the portal \(server.portal) (alice)"))
        let afterQuiet = try store.field("access_token", of: .portal)
        #expect(afterQuiet != old)
        #expect(quiet.leaksNone(of: [old, afterQuiet, try store.field("refresh_token", of: .portal)]))

        let loud = try await ToolRunner.run(
            ["refresh", "--print-token"] + SignInKind.portal.selector(server), environment: environment)
        let newest = try store.field("access_token", of: .portal)
        #expect(loud.stdout == (newest ?? "") + "\n")
        #expect(newest != afterQuiet)
        #expect(try await control.stats().refreshes == 2)
        // `token` now hands out the refreshed token without a request.
        let token = try await ToolRunner.run(["token"] + SignInKind.portal.selector(server), environment: environment)
        #expect(token.stdout == loud.stdout)
        #expect(try await control.stats().total == 2)
    }
}
