import Foundation
import Testing
@testable import PortalAuth

/// The OpenID Foundation's relying-party certification cases that apply to a native public client (code flow with
/// PKCE), played by the bundled server (`oidc_case` of /testctl/config, Tests/AuthServer/portaltest/oidccases.py)
/// against the installed tool and the real browser (issue 26), and the identity switch on refresh (issue 25.6).
@Suite(
    "OpenID Connect relying-party cases", .serialized, .enabled(if: TestServer.isConfigured), .timeLimit(.minutes(10)))
struct OIDCConformanceTests {
    /// The server's case switch and its record of what the tool asked of the key and UserInfo endpoints.
    struct Provider {
        let server: TestServer
        let control: TestControl

        static func prepared() async throws -> Provider {
            let control = try await TestControl.prepared()
            let provider = Provider(server: control.server, control: control)
            _ = try await provider.log(reset: true)
            return provider
        }

        func play(_ name: String) async throws { try await control.configure(["oidc_case": .string(name)]) }

        /// What the tool asked since the last reset (`jwks_requests`, `userinfo_bearer_header`, …).
        func log(reset: Bool = false) async throws -> JSONValue {
            let url = URL(string: "\(server.testControl)/oidc")!
            let response = try await CurlHTTPClient().send(
                reset ? TransportRequest(method: .post, url: url) : .get(url))
            #expect(response.statusCode == 200)
            return try JSONValue.parse(response.body)
        }
    }

    static func count(_ log: JSONValue, _ key: String) -> Int64 { log[key]?.integerValue ?? -1 }

    /// `iap login` in `store` (through the test browser); the result, whatever it is.
    static func signIn(_ store: ScratchStore, _ server: TestServer, browser: String? = nil) async throws
        -> ToolRunner.Result
    {
        try await ToolRunner.run(
            [
                "iap", "login", "--config", server.iapConfig, "--browser-command", browser ?? server.browser,
                "--timeout", "90",
            ],
            environment: ["PORTAL_AUTH_STORE": store.path, "PORTAL_AUTH_TEST_BROWSER_TIMEOUT": "60"],
            timeout: .seconds(120))
    }

    static func hasIAPEntry(_ store: ScratchStore) -> Bool {
        ((try? store.entries()) ?? [:]).values.contains { $0["kind"]?.stringValue == "iap" }
    }

    @Test(
        "an ID token that must be refused fails the sign-in and nothing is stored",
        arguments: [
            ("id_token-bad-sig-rs256", "signature"), ("id_token-bad-sig-es256", "signature"),
            ("id_token-sub", "sub claim"), ("id_token-iat", "iat claim"),
        ])
    func refused(name: String, says: String) async throws {
        let provider = try await Provider.prepared()
        try await provider.play(name)
        let store = try ScratchStore()
        let result = try await Self.signIn(store, provider.server)
        try await provider.control.resetConfiguration()
        #expect(result.status == 65, "\(name): \(result)")
        #expect(result.stderr.contains(says), "\(name): \(result.stderr)")
        #expect(!Self.hasIAPEntry(store), "\(name): a sign-in was stored")
    }

    @Test(
        "the keys come from jwks_uri (rp-discovery-jwks_uri-keys); without kid every key is tried (rp-id_token-kid-absent-multiple-jwks)",
        arguments: ["", "id_token-kid-absent-multiple-jwks"])
    func accepted(name: String) async throws {
        let provider = try await Provider.prepared()
        try await provider.play(name)
        let store = try ScratchStore()
        let result = try await Self.signIn(store, provider.server)
        try await provider.control.resetConfiguration()
        #expect(result.status == 0, "\(name): \(result)")
        #expect(Self.count(try await provider.log(), "jwks_requests") >= 1, "the keys were never fetched")
        #expect(try store.field("jwks_uri", of: .iap) == provider.server.issuer + "/.well-known/jwks.json")
    }

    @Test(
        "a token signed with a new key after sign-in: the keys are fetched again and the new ID token kept (rp-key-rotation-op-sign-key)"
    )
    func keyRotation() async throws {
        let provider = try await Provider.prepared()
        let store = try ScratchStore()
        try await store.signIn(.iap, server: provider.server)
        let before = try #require(try store.field("id_token", of: .iap))
        try await provider.play("key-rotation")
        _ = try await provider.log(reset: true)
        let refreshed = try await ToolRunner.run(
            ["refresh", "--iap", provider.server.iapConfig], environment: ["PORTAL_AUTH_STORE": store.path],
            timeout: .seconds(60))
        try await provider.control.resetConfiguration()
        #expect(refreshed.status == 0, "\(refreshed)")
        #expect(Self.count(try await provider.log(), "jwks_requests") >= 1)
        let after = try #require(try store.field("id_token", of: .iap))
        #expect(after != before)
        #expect(try IDToken(compact: after).keyID == "case-rotated")
        #expect(try store.entry(.iap).value["id_token_refused"] == nil)
    }

    @Test(
        "a refreshed ID token with a bad signature, or for another user (issue 25.6), is refused; the sign-in's stays",
        arguments: [("id_token-bad-sig-rs256", "signature"), ("id_token-sub-switch-on-refresh", "sub claim")])
    func refusedOnRefresh(name: String, says: String) async throws {
        let provider = try await Provider.prepared()
        let store = try ScratchStore()
        try await store.signIn(.iap, server: provider.server)
        let before = try #require(try store.field("id_token", of: .iap))
        let refreshBefore = try store.field("refresh_token", of: .iap)
        try await provider.play(name)
        let refreshed = try await ToolRunner.run(
            ["refresh", "--iap", provider.server.iapConfig], environment: ["PORTAL_AUTH_STORE": store.path],
            timeout: .seconds(60))
        try await provider.control.resetConfiguration()
        #expect(refreshed.status == 0, "\(refreshed)")
        #expect(refreshed.stderr.contains("was refused"), "\(refreshed.stderr)")
        #expect(try store.field("id_token", of: .iap) == before, "\(name): the refused ID token replaced the sign-in's")
        #expect(try store.field("refresh_token", of: .iap) != refreshBefore, "the rotated refresh token was dropped")
        let refusal = try #require(try store.entry(.iap).value["id_token_refused"]?.stringValue)
        #expect(refusal.contains(says), "\(refusal)")
        let printed = try await ToolRunner.run(
            ["token", "--iap", provider.server.iapConfig, "--id-token"], environment: ["PORTAL_AUTH_STORE": store.path],
            timeout: .seconds(60))
        #expect(printed.status == 0, "\(printed)")
        #expect(printed.stdout.trimmingCharacters(in: .newlines) == before, "token --id-token printed another ID token")
    }

    @Test(
        "a discovery document whose issuer is not its URL stops the sign-in before the browser and any code exchange (rp-discovery-issuer-not-matching-config)"
    )
    func issuerNotMatching() async throws {
        let provider = try await Provider.prepared()
        try await provider.play("discovery-issuer-not-matching-config")
        try await provider.control.resetStats()
        let store = try ScratchStore()
        let marker = store.directory.appendingPathComponent("browser-opened")
        let browser = store.directory.appendingPathComponent("browser.sh")
        try "#!/bin/sh\ntouch '\(marker.path)'\n".write(to: browser, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: browser.path)
        let result = try await Self.signIn(store, provider.server, browser: browser.path)
        try await provider.control.resetConfiguration()
        #expect(result.status == 65, "\(result)")
        #expect(
            result.stderr.contains("discovery document")
                && result.stderr.contains(provider.server.issuer + "/elsewhere"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: marker.path), "the browser was opened")
        #expect(try await provider.control.stats().total == 0, "a token request was made")
        #expect(!Self.hasIAPEntry(store))
    }

    @Test(
        "UserInfo is asked with the access token in the Authorization header (rp-userinfo-bearer-header); its name and e-mail are shown by status (rp-scope-userinfo-claims)"
    )
    func userInfo() async throws {
        let provider = try await Provider.prepared()
        try await provider.play("scope-userinfo-claims")
        let store = try ScratchStore()
        let result = try await Self.signIn(store, provider.server)
        try await provider.control.resetConfiguration()
        #expect(result.status == 0, "\(result)")
        let log = try await provider.log()
        #expect(Self.count(log, "userinfo_requests") == 1 && Self.count(log, "userinfo_bearer_header") == 1, "\(log)")
        #expect(Self.count(log, "userinfo_token_elsewhere") == 0)
        let status = try await ToolRunner.run(["status"], environment: ["PORTAL_AUTH_STORE": store.path])
        #expect(status.stdout.contains("Alice Liddell") && status.stdout.contains("alice@example.org"), "\(status)")
    }

    @Test("a UserInfo sub other than the ID token's fails the sign-in (rp-userinfo-bad-sub-claim)")
    func userInfoBadSubject() async throws {
        let provider = try await Provider.prepared()
        try await provider.play("userinfo-bad-sub-claim")
        let store = try ScratchStore()
        let result = try await Self.signIn(store, provider.server)
        try await provider.control.resetConfiguration()
        #expect(result.status == 65, "\(result)")
        #expect(result.stderr.contains("UserInfo") && result.stderr.contains("someone-else"), "\(result.stderr)")
        #expect(!Self.hasIAPEntry(store))
    }
}
