import Foundation
import Testing
@testable import PortalAuth

/// The tool against LemonLDAP::NG (issue 35): Debian's lemonldap-ng run by scripts/lemonldap, its portal the OpenID
/// provider with 20-second access tokens and 30-second ID tokens — shorter than the tool's default `--min-valid 300` —
/// and its handler in front of a JSON backend (a cookie vhost and an OAuth2 bearer vhost). Serialized: each test
/// drives a browser, and the test client has one registered redirect port. The ageing waits poll the token's own
/// `exp` with a hang guard; no duration is asserted.
@Suite("LemonLDAP::NG: the tool with short-lived tokens", .serialized, .enabled(if: LemonLDAPServer.isConfigured))
struct LemonLDAPCommandTests {
    // MARK: - Signing in, and the two vhosts

    @Test(
        "iap login through the portal's form; the bearer vhost admits the access token (--proxy-token access), the host behind the proxy gets the ID token"
    )
    func signInAndRequest() async throws {
        let server = try LemonLDAPServer.current()
        let store = try ScratchStore()
        let login = try await server.login(store)
        #expect(login.status == 0, "\(login)")
        let idToken = try LemonLDAPServer.stored("id_token", in: store)
        let access = try LemonLDAPServer.stored("access_token", in: store)
        let refresh = try LemonLDAPServer.stored("refresh_token", in: store)
        let claims = try IDToken(compact: idToken)
        #expect(claims.issuer == server.issuer)
        #expect(claims.subject == server.user)
        #expect(
            try LemonLDAPServer.payload(of: access)["exp"]?.integerValue != nil,
            "LemonLDAP::NG's access tokens are JWTs here")
        #expect(login.leaksNone(of: [idToken, access, refresh]))

        let mark = try server.mark()
        let bearer = try await server.run(["request", server.api + "/data", "--proxy-token", "access"], store)
        #expect(bearer.status == 0, "\(bearer)")
        let answer = try JSONValue.parse(Data(bearer.stdout.utf8))
        #expect(answer["app"]?.stringValue == "iap-backend", "the backend answered: \(bearer)")
        #expect(answer["bearer"]?.boolValue == true)
        #expect(answer["user"]?.stringValue == server.user, "the handler passed the access token's user on: \(bearer)")
        let behind = try await server.run(["request", server.id + "/data"], store)
        #expect(behind.status == 0, "\(behind)")
        #expect(
            try JSONValue.parse(Data(behind.stdout.utf8))["bearer"]?.boolValue == true,
            "a token went to the host behind the proxy: \(behind)")
        for result in [bearer, behind] { #expect(result.leaksNone(of: [idToken, access, refresh])) }
        let logged = try await server.requests(since: mark).filter {
            $0.host.hasPrefix("api.") || $0.host.hasPrefix("id.")
        }
        #expect(logged.map(\.status) == [200, 200], "\(logged)")
        #expect(logged.allSatisfy { $0.bearer })
    }

    // MARK: - Short tokens

    @Test(
        "after the ID token's and the access token's lifetimes, request and token --url still succeed (exit 0) through a refresh; the new tokens are sent"
    )
    func shortTokensRefreshed() async throws {
        let server = try LemonLDAPServer.current()
        let store = try ScratchStore()
        #expect(try await server.login(store).status == 0)
        let firstID = try LemonLDAPServer.stored("id_token", in: store)
        let firstAccess = try LemonLDAPServer.stored("access_token", in: store)
        try await server.waitUntilExpired(firstID)
        try await server.waitUntilExpired(LemonLDAPServer.stored("access_token", in: store))

        let mark = try server.mark()
        let behind = try await server.run(["request", server.id + "/data"], store)
        #expect(behind.status == 0, "an ID token shorter than --min-valid does not end the sign-in: \(behind)")
        #expect(try JSONValue.parse(Data(behind.stdout.utf8))["bearer"]?.boolValue == true, "\(behind)")
        let token = try await server.run(["token", "--url", server.id + "/data"], store)
        #expect(token.status == 0, "\(token)")
        let sentID = try #require(token.stdoutLines.last)
        #expect(sentID != firstID, "a refreshed ID token")
        #expect(try IDToken(compact: sentID).subject == server.user)
        #expect(try IDToken(compact: sentID).expirationDate > IDToken(compact: firstID).expirationDate)

        let bearer = try await server.run(["request", server.api + "/data", "--proxy-token", "access"], store)
        #expect(bearer.status == 0, "\(bearer)")
        #expect(
            try JSONValue.parse(Data(bearer.stdout.utf8))["user"]?.stringValue == server.user,
            "the handler admits the refreshed access token: \(bearer)")
        let accessToken = try await server.run(
            ["token", "--url", server.api + "/data", "--proxy-token", "access"], store)
        #expect(accessToken.status == 0, "\(accessToken)")
        #expect(accessToken.stdoutLines.last != firstAccess, "a refreshed access token")

        let logged = try await server.requests(since: mark)
        #expect(!LemonLDAPServer.tokenRequests(logged).isEmpty, "the tokens were refreshed: \(logged)")
        #expect(
            logged.filter { $0.host.hasPrefix("api.") || $0.host.hasPrefix("id.") }.map(\.status) == [200, 200],
            "\(logged)")
        for result in [behind, token, bearer, accessToken] {
            #expect(!result.stderr.contains("sent no new one"), "LemonLDAP::NG does send a new ID token: \(result)")
        }
    }

    @Test(
        "N parallel token --url processes on an aged ID token: one refresh request, every process exits 0 with the same token",
        arguments: [6])
    func parallelRefreshOnce(processes: Int) async throws {
        let server = try LemonLDAPServer.current()
        let store = try ScratchStore()
        #expect(try await server.login(store).status == 0)
        try await server.waitUntilExpired(LemonLDAPServer.stored("id_token", in: store))
        let environment = server.environment(store)
        let url = server.id + "/data"
        let mark = try server.mark()
        let results = try await withThrowingTaskGroup(of: ToolRunner.Result.self) { group in
            for _ in 0..<processes {
                group.addTask {
                    try await ToolRunner.run(["token", "--url", url], environment: environment, timeout: .seconds(90))
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for result in results { #expect(result.status == 0, "\(result)") }
        #expect(Set(results.compactMap { $0.stdoutLines.last }).count == 1, "one token for all: \(results)")
        let refreshes = LemonLDAPServer.tokenRequests(try await server.requests(since: mark))
        #expect(refreshes.count == 1, "one refresh for \(processes) racers: \(refreshes)")
    }

    // MARK: - The cookie vhost's JSON 401

    @Test(
        "the cookie vhost's answers: 302 to the portal for a browser, a JSON 401 to Accept: application/json; the sign-in does not call that a refusal, request exits 77 with iap login"
    )
    func jsonUnauthorized() async throws {
        let server = try LemonLDAPServer.current()
        var browserProbe = TransportRequest(url: URL(string: server.app + "/data")!)
        browserProbe.headers.add(name: "Accept", value: "text/html")
        let redirect = try await CurlHTTPClient().send(browserProbe)
        #expect(redirect.statusCode == 302)
        #expect(redirect.headers["Location"]?.hasPrefix(server.portal) == true, "\(redirect.headers)")
        var jsonProbe = TransportRequest(url: URL(string: server.app + "/data")!)
        jsonProbe.headers.add(name: "Accept", value: "application/json")
        let unauthorized = try await CurlHTTPClient().send(jsonProbe)
        #expect(unauthorized.statusCode == 401)
        #expect(try JSONValue.parse(unauthorized.body)["error"] != nil, "a JSON answer")

        let store = try ScratchStore()
        let result = try await server.run(
            ["request", server.app + "/data", "-H", "Accept: application/json", "--config", server.config], store)
        #expect(result.status == 77, "\(result)")
        #expect(result.stdout.isEmpty, "the 401's body is not the result: \(result)")
        #expect(result.stderr.contains("portal-auth iap login --config \(server.config)"), "\(result)")

        // The sign-in's look at the authorization URL before the browser opens gets the portal's JSON 401 (no
        // session yet): an answer, not a refusal.
        let login = try await server.login(store)
        #expect(login.status == 0, "\(login)")
        #expect(
            !login.stderr.contains("seems to reject"),
            "the portal's JSON 401 is not a rejected sign-in request: \(login)")
    }

    // MARK: - Logout (the client with hour-long tokens: what shows an ended session is asked with its access token)

    @Test(
        "iap logout in the browser that holds the portal's cookie: LemonLDAP::NG ends the session and returns, but its access token still works at UserInfo, so nothing is claimed"
    )
    func logoutReturnsWithoutEvidence() async throws {
        let server = try LemonLDAPServer.current()
        let store = try ScratchStore()
        #expect(try await server.login(store, config: server.longConfig).status == 0)
        let mark = try server.mark()
        let result = try await server.run(
            ["iap", "logout", "--config", server.longConfig, "--browser-command", server.browser, "--timeout", "60"],
            store,
            timeout: .seconds(90))
        let logged = try await server.requests(since: mark)
        #expect(
            logged.contains { $0.path == "/oauth2/logout" && $0.status == 302 },
            "LemonLDAP::NG sent the browser back: \(logged)")
        // LemonLDAP::NG 2.16 keeps an access token valid at its UserInfo endpoint until it expires, whether or not the
        // SSO session it came from ended: its return is no evidence, and the tool claims nothing (issue 35, item 8).
        #expect(!result.stderr.contains("confirmed the end of the browser session"), "\(result)")
        #expect(
            result.stderr.contains("returned after its logout page but did not confirm the end of a session"),
            "\(result)")
        #expect(result.status == 75, "\(result)")
        // No revocation endpoint: the refresh token left valid is named, with where.
        #expect(result.stderr.contains("the identity provider offers no revocation endpoint"), "\(result)")
        #expect(try store.entries().isEmpty, "the stored sign-in is deleted; the warning says the session may remain")
    }

    @Test(
        "iap logout in a browser without the portal's cookie: LemonLDAP::NG returns to the loopback having ended nothing, which is not reported as confirmed"
    )
    func logoutWithoutCookieNotConfirmed() async throws {
        let server = try LemonLDAPServer.current()
        let store = try ScratchStore()
        #expect(try await server.login(store, config: server.longConfig).status == 0)
        let mark = try server.mark()
        // A fresh browser profile: the portal's session cookie stays in the one the sign-in used.
        let result = try await server.run(
            ["iap", "logout", "--config", server.longConfig, "--browser-command", server.browser, "--timeout", "60"],
            store, profile: nil,
            timeout: .seconds(90))
        let logged = try await server.requests(since: mark)
        #expect(
            logged.contains { $0.path == "/oauth2/logout" && $0.status == 302 },
            "LemonLDAP::NG sent the browser back: \(logged)")
        // The evidence of an ended session is the UserInfo endpoint refusing the sign-in's access token; LemonLDAP::NG
        // publishes its discovery document at its issuer (OIDC Discovery §4), above `/oauth2/authorize`, where the
        // sign-out looks for it as the sign-in does. Here the token still works: not confirmed.
        #expect(!result.stderr.contains("confirmed the end of the browser session"), "\(result)")
        #expect(result.status != 0, "\(result)")
    }
}
