import Foundation
import Testing
@testable import PortalAuth

/// `portal-auth request` end to end against the bundled server and the real browser.
@Suite("request command", .serialized, .enabled(if: TestServer.isConfigured))
struct RequestCommandTests {
    static func environment(_ store: ScratchStore) -> [String: String] {
        ["PORTAL_AUTH_STORE": store.path, "PORTAL_AUTH_TEST_BROWSER_TIMEOUT": "60"]
    }

    @Test(
        "portal: exit 77 with the login command when nothing is stored; --interactive signs in; then the stored sign-in serves scripts"
    )
    func portal() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        let url = "\(server.portal)/sharing/rest/portals/self?f=json"
        let oauth = ["--portal", server.portal, "--client-id", server.clientID]

        let refused = try await ToolRunner.run(["request", url] + oauth, environment: Self.environment(store))
        #expect(refused.status == 77, "\(refused)")
        #expect(refused.stdout.isEmpty)
        #expect(refused.stderr.contains("Token Required"))
        #expect(refused.stderr.contains("portal-auth login --portal \(server.portal) --client-id \(server.clientID)"))
        #expect(refused.stderr.contains("--interactive"))

        let signedIn = try await ToolRunner.run(
            ["request", url, "--interactive", "--browser-command", server.browser, "--timeout", "90"] + oauth,
            environment: Self.environment(store), timeout: .seconds(120))
        #expect(signedIn.status == 0, "\(signedIn)")
        #expect(try JSONValue.parse(Data(signedIn.stdout.utf8))["user"]?["username"]?.stringValue == "alice")
        let access = try store.field("access_token", of: .portal)
        let refresh = try store.field("refresh_token", of: .portal)

        // No options, no browser: the stored sign-in covers the URL.
        let stored = try await ToolRunner.run(
            ["request", url, "--format", "json"], environment: Self.environment(store))
        #expect(stored.status == 0, "\(stored)")
        let json = try JSONValue.parse(Data(stored.stdout.utf8))
        #expect(json["status"]?.integerValue == 200)
        #expect(json["url"]?.stringValue == "\(server.portal)/sharing/rest/portals/self")
        #expect(json["body"]?["user"]?["username"]?.stringValue == "alice")
        #expect(stored.leaksNone(of: [access, refresh]))
        #expect(signedIn.leaksNone(of: [access, refresh]))
    }

    @Test("IAP host: exit 77 with the iap login command; --config with --interactive signs in through the browser")
    func iap() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        let refused = try await ToolRunner.run(
            ["request", server.iapURL, "--config", server.iapConfig], environment: Self.environment(store))
        #expect(refused.status == 77, "\(refused)")
        #expect(refused.stderr.contains("Identity-Aware Proxy"))
        #expect(refused.stderr.contains("portal-auth iap login --config \(server.iapConfig)"))

        let signedIn = try await ToolRunner.run(
            [
                "request", server.iapURL, "--config", server.iapConfig, "--interactive", "--browser-command",
                server.browser, "--timeout", "90",
                "-H", "Accept: application/json",
            ],
            environment: Self.environment(store), timeout: .seconds(120))
        #expect(signedIn.status == 0, "\(signedIn)")
        #expect(try JSONValue.parse(Data(signedIn.stdout.utf8))["user"]?.stringValue == "alice")

        // Stored: found by the URL alone; a redirect (no JSON Accept) is answered with the stored token at once.
        let stored = try await ToolRunner.run(["request", server.iapURL], environment: Self.environment(store))
        #expect(stored.status == 0, "\(stored)")
        #expect(stored.stdout.contains("alice"))
        #expect(
            stored.leaksNone(of: [try store.field("access_token", of: .iap), try store.field("id_token", of: .iap)]))
    }

    @Test(
        "IAP: the ID token goes to the proxied app; token --url and exec give the same one; --proxy-token access switches all three"
    )
    func proxyToken() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        // Nothing stored and no --config: the proxy's redirect to its authorization request is recognised, never
        // printed as the result; the command to run names the file to give.
        let unknown = try await ToolRunner.run(["request", server.iapURL], environment: Self.environment(store))
        #expect(unknown.status == 77, "\(unknown)")
        #expect(unknown.stdout.isEmpty)
        #expect(unknown.stderr.contains("portal-auth iap login --config FILE"), "\(unknown.stderr)")

        let signedIn = try await ToolRunner.run(
            ["iap", "login", "--config", server.iapConfig, "--browser-command", server.browser, "--timeout", "90"],
            environment: Self.environment(store), timeout: .seconds(120))
        #expect(signedIn.status == 0, "\(signedIn)")
        let idToken = try #require(try store.field("id_token", of: .iap))
        let accessToken = try #require(try store.field("access_token", of: .iap))

        let sent = try await ToolRunner.run(
            ["request", server.iapURL, "-H", "Accept: application/json"], environment: Self.environment(store))
        #expect(sent.status == 0, "\(sent)")
        #expect(try JSONValue.parse(Data(sent.stdout.utf8))["token_kind"]?.stringValue == "id")
        let printed = try await ToolRunner.run(["token", "--url", server.iapURL], environment: Self.environment(store))
        #expect(printed.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == idToken)
        let exec = try await ToolRunner.run(
            ["exec", "--", "sh", "-c", #"printf '%s' "$PORTAL_AUTH_TOKEN""#], environment: Self.environment(store))
        #expect(exec.stdout == idToken)

        let access = try await ToolRunner.run(
            ["request", server.iapURL, "-H", "Accept: application/json", "--proxy-token", "access"],
            environment: Self.environment(store))
        #expect(try JSONValue.parse(Data(access.stdout.utf8))["token_kind"]?.stringValue == "access")
        var environment = Self.environment(store)
        environment["PORTAL_AUTH_PROXY_TOKEN"] = "access"
        let printedAccess = try await ToolRunner.run(["token", "--url", server.iapURL], environment: environment)
        #expect(printedAccess.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == accessToken)
        let execAccess = try await ToolRunner.run(
            ["exec", "--", "sh", "-c", #"printf '%s' "$PORTAL_AUTH_TOKEN""#], environment: environment)
        #expect(execAccess.stdout == accessToken)
        let status = try await ToolRunner.run(["status"], environment: environment)
        #expect(status.stdout.contains("the access token"), "\(status.stdout)")
        #expect(sent.leaksNone(of: [idToken, accessToken]))

        // A token the proxy refuses while it is fresh (issued less than a minute ago): no refresh, exit 65 (not 77),
        // the causes named and the switch to the other token kind.
        let now = Int64(Date().timeIntervalSince1970)
        try await store.rewrite(.iap) { entry in
            entry["id_token"] = .string("not.a-token-the.proxy-accepts")
            entry["updated_at"] = .integer(now)
        }
        let refusedRefresh = try store.field("refresh_token", of: .iap)
        let refused = try await ToolRunner.run(
            ["request", server.iapURL, "-H", "Accept: application/json"], environment: Self.environment(store))
        #expect(refused.status == 65, "\(refused)")
        #expect(refused.stdout.isEmpty)
        #expect(refused.stderr.contains("refused a fresh ID token"), "\(refused.stderr)")
        #expect(
            refused.stderr.contains("client ID or scope") && refused.stderr.contains("--proxy-token access"),
            "\(refused.stderr)")
        #expect(
            refused.stderr.contains("portal-auth status --claims --url"),
            "the refusal points to the token's claims: \(refused.stderr)")
        #expect(try store.field("refresh_token", of: .iap) == refusedRefresh, "no refresh token spent")
        #expect(refused.leaksNone(of: [accessToken, refusedRefresh, "not.a-token-the.proxy-accepts"]))
    }

    @Test(
        "without any way to sign in, exit 77 says to run with --interactive; usage errors exit 64",
        arguments: [
            (["--data", "a", "--data-file", "f"], Int32(64), "give --data or --data-file, not both"),
            (["--portal", "https://x.example"], 64, "--portal and --client-id go together"),
            (["-H", "NoColon"], 64, "is not 'Name: value'"),
            (["--prompt-untrusted"], 64, "--prompt-untrusted goes with --interactive"),
            ([], 77, "Run again with --interactive"),
        ])
    func failures(extra: [String], status: Int32, message: String) async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        let result = try await ToolRunner.run(
            ["request", "\(server.portal)/rest/services?f=json"] + extra, environment: Self.environment(store))
        #expect(result.status == status, "\(result)")
        #expect(result.stderr.contains(message), "\(result)")
        #expect(result.stdout.isEmpty)
    }

    @Test("a POST with --data is sent as a form, with the stored token")
    func post() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        try await store.signIn(.portal, server: server)
        let result = try await ToolRunner.run(
            ["request", "\(server.portal)/sharing/rest/portals/self", "--data", "f=json"],
            environment: Self.environment(store))
        #expect(result.status == 0, "\(result)")
        #expect(try JSONValue.parse(Data(result.stdout.utf8))["user"]?["username"]?.stringValue == "alice")
    }
}
