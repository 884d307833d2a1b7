import Foundation
import Testing
@testable import PortalAuth

/// The tool through a real Identity-Aware Proxy (issue 23): Apache httpd + mod_auth_openidc (scripts/iap-proxy) before
/// a JSON backend, protected by the django-oauth-toolkit server and by Glewlwyd. Serialized: each test drives a
/// browser, and Glewlwyd's clients share one fixed redirect port.
@Suite("IAP proxy (Apache + mod_auth_openidc): the tool", .serialized, .enabled(if: IAPProxyServer.isConfigured))
struct IAPProxyCommandTests {
    static let providers = ["authserver", "glewlwyd"]

    // MARK: - The token sent

    @Test(
        "signed in, request and token --url send the ID token, as the SDK does: the proxy admits it, one request per call",
        arguments: providers)
    func idTokenSent(_ name: String) async throws {
        let proxy = try IAPProxyServer.current()
        let provider = try proxy.provider(name)
        let store = try ScratchStore()
        let login = try await proxy.login(provider, store)
        #expect(login.status == 0, "\(login)")
        let idToken = try IAPProxyServer.stored("id_token", in: store)
        let access = try IAPProxyServer.stored("access_token", in: store)
        let refresh = try IAPProxyServer.stored("refresh_token", in: store)
        let claims = try IAPProxyServer.claims(of: idToken)

        let mark = try proxy.mark()
        for path in ["/api/data", "/auth/data", "/portal/data"] {
            let result = try await proxy.run(["request", provider.app + path], provider, store)
            #expect(result.status == 0, "\(path): \(result)")
            let answer = try IAPProxyServer.backendAnswer(result)
            #expect(answer["path"]?.stringValue == path)
            #expect(answer["bearer"]?.boolValue == true)
            #expect(answer["user"]?.stringValue == claims.subject, "\(result)")
            #expect(
                answer["claims"]?["aud"]?.stringValue == claims.audiences.first,
                "the ID token's audience reached the app: \(result)")
            #expect(result.leaksNone(of: [idToken, access, refresh]))
        }
        // One request per call: nothing refused, nothing refreshed, nothing sent twice.
        let requests = try await proxy.requests(since: mark, hostPrefix: "app.\(name).")
        #expect(requests.map(\.status) == [200, 200, 200], "\(requests)")
        #expect(requests.allSatisfy { $0.bearer })
        #expect(try IAPProxyServer.stored("refresh_token", in: store) == refresh, "no refresh spent")

        let token = try await proxy.run(["token", "--url", provider.app + "/api/data"], provider, store)
        #expect(token.status == 0, "\(token)")
        #expect(
            token.stdoutLines == [idToken], "token --url prints the token sent to hosts behind the proxy: the ID token")

        // A script run by exec gets the same token, and the proxy admits it.
        let script = #"curl -sS -f -H "Authorization: Bearer $PORTAL_AUTH_TOKEN" "$0""#
        let exec = try await proxy.run(
            ["exec", "--url", provider.app + "/api/data", "--", "sh", "-c", script, provider.app + "/api/data"],
            provider, store)
        #expect(exec.status == 0, "\(exec)")
        #expect(try IAPProxyServer.backendAnswer(exec)["claims"]?["aud"]?.stringValue == claims.audiences.first)
    }

    @Test(
        "iap login --proxy-token access keeps the choice: request, token --url and exec send the access token without the option; --proxy-token id overrides it; status shows it"
    )
    func storedProxyToken() async throws {
        let proxy = try IAPProxyServer.current()
        let provider = try proxy.provider("authserver")
        let store = try ScratchStore()
        let login = try await proxy.login(provider, store, extra: ["--proxy-token", "access"])
        #expect(login.status == 0, "\(login)")
        #expect(
            login.stderr.contains("Hosts behind the proxy get the access token (stored with the sign-in"), "\(login)")
        let access = try IAPProxyServer.stored("access_token", in: store)

        let accepted = try await proxy.run(["request", provider.access + "/data"], provider, store)
        #expect(accepted.status == 0, "the stored choice reaches the access-token host: \(accepted)")
        #expect(try IAPProxyServer.backendAnswer(accepted)["bearer"]?.boolValue == true)
        let token = try await proxy.run(["token", "--url", provider.access + "/data"], provider, store)
        #expect(token.stdoutLines == [access], "\(token)")
        let script = #"curl -sS -f -H "Authorization: Bearer $PORTAL_AUTH_TOKEN" "$0""#
        let exec = try await proxy.run(
            ["exec", "--url", provider.access + "/data", "--", "sh", "-c", script, provider.access + "/data"], provider,
            store)
        #expect(exec.status == 0, "\(exec)")
        let overridden = try await proxy.run(
            ["token", "--url", provider.access + "/data", "--proxy-token", "id"], provider, store)
        #expect(overridden.stdoutLines == [try IAPProxyServer.stored("id_token", in: store)], "\(overridden)")

        let status = try await proxy.run(["status", "--format", "json"], provider, store)
        let credential = try JSONValue.parse(Data(status.stdout.utf8))["credentials"]?.arrayValue?.first
        #expect(
            credential?["proxy_token"] == .string("access") && credential?["proxy_token_stored"] == .string("access"),
            "\(status)")
        let claims = try await proxy.run(["status", "--claims", "--url", provider.access + "/data"], provider, store)
        #expect(claims.status == 0 && claims.stdout.contains("ID token claims:"), "\(claims)")
        #expect(claims.leaksNone(of: [access, try IAPProxyServer.stored("id_token", in: store)]))
    }

    @Test(
        "--proxy-token access sends the access token, which the proxy's access-token host admits; the ID token there is refused without a refresh (exit 65, the other kind named)",
        arguments: providers)
    func accessTokenSent(_ name: String) async throws {
        let proxy = try IAPProxyServer.current()
        let provider = try proxy.provider(name)
        let store = try ScratchStore()
        #expect(try await proxy.login(provider, store).status == 0)
        let access = try IAPProxyServer.stored("access_token", in: store)
        let refresh = try IAPProxyServer.stored("refresh_token", in: store)

        let mark = try proxy.mark()
        let accepted = try await proxy.run(
            ["request", provider.access + "/data", "--proxy-token", "access"], provider, store)
        #expect(accepted.status == 0, "\(accepted)")
        #expect(try IAPProxyServer.backendAnswer(accepted)["bearer"]?.boolValue == true)
        let token = try await proxy.run(
            ["token", "--url", provider.access + "/data", "--proxy-token", "access"], provider, store)
        #expect(token.status == 0, "\(token)")
        #expect(token.stdoutLines == [access])

        let refused = try await proxy.run(["request", provider.access + "/data"], provider, store)
        #expect(refused.status == 65, "a fresh token refused: signing in again cannot help: \(refused)")
        #expect(refused.stdout.isEmpty, "the proxy's answer is not printed as the result")
        #expect(refused.stderr.contains("--proxy-token access"), "\(refused)")
        #expect(
            refused.stderr.contains("portal-auth status --claims --url \(provider.access)/data"),
            "the refusal points to the token's claims: \(refused)")
        #expect(refused.leaksNone(of: [access, try IAPProxyServer.stored("id_token", in: store), refresh]))
        let requests = try await proxy.requests(since: mark, hostPrefix: "access.\(name).")
        #expect(
            requests.map(\.status) == [200, 401],
            "the refused ID token was sent once, not refreshed and sent again: \(requests)")
        #expect(
            try IAPProxyServer.stored("refresh_token", in: store) == refresh, "no refresh token spent on a fresh token")
    }

    // MARK: - Sign-in requests

    @Test(
        "nothing stored: every kind of sign-in request the proxy makes exits 77 with the sign-in command, never printed as the result",
        arguments: providers)
    func signInRequests(_ name: String) async throws {
        let proxy = try IAPProxyServer.current()
        let provider = try proxy.provider(name)
        let store = try ScratchStore()
        // What the proxy answers a client without a session, and what the tool makes of it.
        let cases: [(url: String, headers: [String], config: Bool, proxyStatus: Int)] = [
            (provider.app + "/auth/data", [], false, 302),  // OIDCUnAuthAction auth: 302 to an authorization request
            (provider.app + "/auth/data", [], true, 302),
            (provider.app + "/auth/data", ["-H", "Accept: application/json"], true, 401),  // 401, no WWW-Authenticate
            (provider.app + "/api/data", [], true, 401),  // OIDCUnAuthAction 401
            (provider.app + "/portal/data", [], true, 302),  // 302 to the proxy's own /signin.html
            (provider.post + "/data", [], true, 200),  // the page that posts itself to the provider
        ]
        for item in cases {
            // The proxy's answer itself (Apache logs the auto-post page as 401 though it sends a 200).
            var probe = TransportRequest(url: URL(string: item.url)!)
            probe.headers.add(name: "Accept", value: item.headers.isEmpty ? "*/*" : "application/json")
            let answer = try await CurlHTTPClient().send(probe)
            #expect(answer.statusCode == item.proxyStatus, "\(item.url)")
            #expect(answer.headers["WWW-Authenticate"] == nil)
            if item.proxyStatus == 302 {
                let location = try #require(answer.headers["Location"])
                #expect(
                    item.url.contains("/portal/")
                        ? location.hasSuffix("/signin.html") : location.contains("client_id=portal-auth-iap-proxy"),
                    "\(location)")
            }
            if item.proxyStatus == 200 {
                #expect(String(decoding: answer.body, as: UTF8.self).contains("<form method=\"post\""))
            }

            let arguments = ["request", item.url] + item.headers + (item.config ? ["--config", provider.config] : [])
            let result = try await proxy.run(arguments, provider, store)
            #expect(result.status == 77, "\(arguments): \(result)")
            #expect(result.stdout.isEmpty, "\(arguments): the sign-in page is not the result: \(result)")
            #expect(!result.stderr.contains("<html") && !result.stderr.contains("<form"), "\(result)")
            #expect(result.stderr.contains("portal-auth iap login"), "\(arguments): \(result)")
            if item.config { #expect(result.stderr.contains("--config \(provider.config)"), "\(arguments): \(result)") }
        }
        #expect((try? store.entries())?.isEmpty ?? true, "nothing stored")
    }

    // MARK: - Refused and expiring tokens

    @Test(
        "a token of a client the proxy does not accept: exit 65 naming the causes, one request per call and no refresh token spent",
        arguments: providers)
    func refusedClient(_ name: String) async throws {
        let proxy = try IAPProxyServer.current()
        let provider = try proxy.provider(name)
        let other = try #require(provider.otherConfig)
        let store = try ScratchStore()
        let login = try await proxy.login(provider, store, config: other)
        #expect(login.status == 0, "\(login)")
        let refresh = try IAPProxyServer.stored("refresh_token", in: store)
        for _ in 0..<2 {
            let mark = try proxy.mark()
            let result = try await proxy.run(["request", provider.app + "/api/data"], provider, store)
            #expect(result.status == 65, "\(result)")
            #expect(result.stdout.isEmpty)
            #expect(result.stderr.contains("client ID"), "the likely causes are named: \(result)")
            #expect(result.stderr.contains("--proxy-token access"), "\(result)")
            let requests = try await proxy.requests(since: mark, hostPrefix: "app.\(name).")
            #expect(requests.map(\.status) == [401], "sent once: \(requests)")
            #expect(try IAPProxyServer.stored("refresh_token", in: store) == refresh, "no refresh token spent per call")
        }
    }

    @Test(
        "a refused token older than a minute is refreshed once and sent again; then the fresh one serves without a refresh"
    )
    func oldRefusedTokenRefreshedOnce() async throws {
        // django-oauth-toolkit: its refresh responses carry a new ID token (Glewlwyd's carry none).
        let proxy = try IAPProxyServer.current()
        let provider = try proxy.provider("authserver")
        let other = try #require(provider.otherConfig)
        let otherStore = try ScratchStore()
        #expect(try await proxy.login(provider, otherStore, config: other).status == 0)
        let otherIDToken = try IAPProxyServer.stored("id_token", in: otherStore)
        let store = try ScratchStore()
        #expect(try await proxy.login(provider, store).status == 0)
        let refresh = try IAPProxyServer.stored("refresh_token", in: store)
        // The stored ID token is one the proxy refuses — the sign-in's own header and claims with another token's
        // signature, so that the refreshed ID token is still the same sign-in's (iss, sub, aud: OIDC Core 12.2) —
        // and the sign-in is an hour old.
        let ownIDToken = try IAPProxyServer.stored("id_token", in: store)
        let refusedIDToken =
            ownIDToken.split(separator: ".").prefix(2).joined(separator: ".") + "."
            + (otherIDToken.split(separator: ".").last.map(String.init) ?? "")
        #expect(refusedIDToken != ownIDToken)
        let hourAgo = Int64(Date().timeIntervalSince1970) - 3600
        try await SignOutTests.editEntries(store) {
            $0["id_token"] = .string(refusedIDToken)
            $0["updated_at"] = .integer(hourAgo)
            $0["refresh_token_issued_at"] = .integer(hourAgo)
        }
        let mark = try proxy.mark()
        let result = try await proxy.run(["request", provider.app + "/api/data"], provider, store)
        #expect(result.status == 0, "\(result)")
        #expect(try IAPProxyServer.backendAnswer(result)["claims"]?["aud"]?.stringValue == "portal-auth-test")
        let logged1 = try await proxy.requests(since: mark, hostPrefix: "app.authserver.")
        #expect(logged1.map(\.status) == [401, 200], "sent, refreshed, sent again")
        let rotated = try IAPProxyServer.stored("refresh_token", in: store)
        #expect(rotated != refresh, "one refresh (the server rotates refresh tokens)")
        #expect(try IAPProxyServer.stored("id_token", in: store) != refusedIDToken)

        let again = try proxy.mark()
        #expect(try await proxy.run(["request", provider.app + "/api/data"], provider, store).status == 0)
        let logged2 = try await proxy.requests(since: again, hostPrefix: "app.authserver.")
        #expect(logged2.map(\.status) == [200])
        #expect(try IAPProxyServer.stored("refresh_token", in: store) == rotated, "no refresh per call")
    }

    @Test("an ID token that expired is refreshed before it is sent: the proxy sees one request, with the new token")
    func expiredIDToken() async throws {
        let proxy = try IAPProxyServer.current()
        let provider = try proxy.provider("authserver")
        let store = try ScratchStore()
        #expect(try await proxy.login(provider, store).status == 0)
        let idToken = try IAPProxyServer.stored("id_token", in: store)
        try await Self.expireIDToken(in: store)
        let mark = try proxy.mark()
        let result = try await proxy.run(["request", provider.app + "/api/data"], provider, store)
        #expect(result.status == 0, "\(result)")
        let logged3 = try await proxy.requests(since: mark, hostPrefix: "app.authserver.")
        #expect(logged3.map(\.status) == [200], "refreshed before sending, not after a refusal")
        let renewed = try IAPProxyServer.stored("id_token", in: store)
        #expect(renewed != idToken)
        #expect(try IAPProxyServer.claims(of: renewed).expirationDate > Date())
    }

    @Test("Glewlwyd's refresh gives no new ID token: the expired one is never sent, and a sign-in is asked for (77)")
    func expiredIDTokenWithoutRenewal() async throws {
        let proxy = try IAPProxyServer.current()
        let provider = try proxy.provider("glewlwyd")
        let store = try ScratchStore()
        #expect(try await proxy.login(provider, store).status == 0)
        try await Self.expireIDToken(in: store)
        let mark = try proxy.mark()
        let result = try await proxy.run(["request", provider.app + "/api/data"], provider, store)
        #expect(result.status == 77, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("portal-auth iap login"), "\(result)")
        let logged4 = try await proxy.requests(since: mark, hostPrefix: "app.glewlwyd.")
        #expect(logged4.allSatisfy { !$0.bearer }, "no expired token sent")
    }

    /// Marks the stored ID token expired an hour ago (the sign-in an hour old): the tool's own view; the token itself
    /// is still valid at the proxy, so a request that reaches it shows which token went.
    static func expireIDToken(in store: ScratchStore) async throws {
        let past = Int64(Date().timeIntervalSince1970) - 3600
        try await SignOutTests.editEntries(store) {
            $0["id_token_expires_at"] = .integer(past + 60)
            $0["updated_at"] = .integer(past)
        }
    }

    // MARK: - Logout

    @Test(
        "iap logout: the stored sign-in is gone, and the proxy's host wants a sign-in again (77)",
        arguments: [("authserver", Int32(0)), ("glewlwyd", Int32(69))])
    func logout(_ name: String, _ expectedStatus: Int32) async throws {
        let proxy = try IAPProxyServer.current()
        let provider = try proxy.provider(name)
        let store = try ScratchStore()
        #expect(try await proxy.login(provider, store).status == 0)
        #expect(try await proxy.run(["request", provider.app + "/api/data"], provider, store).status == 0)
        let browser = name == "glewlwyd" ? try GlewlwydServer.current().browser : try TestServer.current().browser
        let result = try await proxy.run(
            ["iap", "logout", "--config", provider.config, "--browser-command", browser, "--timeout", "60"], provider,
            store,
            timeout: .seconds(90))
        // Glewlwyd ends the browser session but refuses a public client's revocation (69).
        #expect(result.status == expectedStatus, "\(result)")
        #expect(result.stderr.contains("confirmed the end of the browser session"), "\(result)")
        #expect(try store.entries().isEmpty)
        let mark = try proxy.mark()
        let after = try await proxy.run(
            ["request", provider.app + "/api/data", "--config", provider.config], provider, store)
        #expect(after.status == 77, "\(after)")
        let logged5 = try await proxy.requests(since: mark, hostPrefix: "app.\(name).")
        #expect(logged5.map(\.bearer) == [false], "no token left to send")
    }
}
