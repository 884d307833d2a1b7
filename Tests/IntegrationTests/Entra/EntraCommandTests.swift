import Foundation
import Testing
@testable import PortalAuth

/// The tool against the Microsoft Entra ID simulation (issue 44; scripts/entra, Tests/Entra/README.md): the seed's IAP
/// JSON with each tenant form signs in, refreshes, reaches the app proxy and logs out; forged ID tokens are refused;
/// each AADSTS error people meet gives its fix. Serialized: the simulation's steering (a failure or forgery for the
/// next token call, key rollovers) is one state for all its clients.
@Suite("Microsoft Entra ID simulation: the tool", .serialized, .enabled(if: EntraSimulation.isConfigured))
struct EntraCommandTests {
    /// The tenant forms that must sign in (v2-protocols-oidc.md's tenant table): the GUID, the initial domain, a
    /// verified custom domain, and `organizations` (any work account; the app is multi-tenant).
    static let tenantForms = ["guid", "onmicrosoft", "custom-domain", "organizations"]

    /// No "warning" and no UserInfo complaint: Entra's UserInfo (Graph's) never accepts the seed's tokens (issue 44.3).
    static func isQuiet(_ result: ToolRunner.Result) -> Bool {
        let text = result.stderr.lowercased()
        return !text.contains("warning") && !text.contains("userinfo")
    }

    @Test(
        "the seed's IAP JSON signs in, reaches the app proxy, refreshes (keeping the rotated refresh token) and logs out with state, without a warning or a UserInfo request",
        arguments: tenantForms)
    func fullCycle(_ form: String) async throws {
        let (entra, store) = try await EntraSimulation.fresh()
        let mark = try entra.mark()

        let login = try await entra.login(form, store)
        #expect(login.status == 0, "\(form): \(login)")
        #expect(Self.isQuiet(login), "\(form): no warning on a normal Entra sign-in: \(login)")
        guard login.status == 0 else { return }
        let idToken = try EntraSimulation.stored("id_token", in: store)
        let access = try EntraSimulation.stored("access_token", in: store)
        let refresh = try EntraSimulation.stored("refresh_token", in: store)
        let claims = try IDToken(compact: idToken)
        #expect(claims.issuer == "https://login.microsoftonline.com/\(entra.tenantID)/v2.0")
        #expect(claims.tenantID == entra.tenantID)

        // The app proxy admits the token sent (and answered 302 to a sign-in page without it).
        let request = try await entra.run(["request", entra.app + "/data"], store)
        #expect(request.status == 0, "\(form): \(request)")
        let answer = try? JSONValue.parse(Data(request.stdout.utf8))
        #expect(answer?["app"]?.stringValue == "entra-app-proxy", "\(form): \(request)")
        #expect(answer?["tid"]?.stringValue == entra.tenantID)

        // Refresh: the new refresh token is kept (refresh-tokens.md: each redemption returns a new one).
        let refreshed = try await entra.run(["refresh", "--iap", entra.config(form)], store)
        #expect(refreshed.status == 0, "\(form): \(refreshed)")
        #expect(Self.isQuiet(refreshed), "\(form): \(refreshed)")
        #expect(try await entra.count("token_refresh_token") == 1)
        let rotated = try EntraSimulation.stored("refresh_token", in: store)
        #expect(rotated != refresh, "\(form): the rotated refresh token is kept")
        let again = try await entra.run(["request", entra.app + "/data"], store)
        #expect(again.status == 0, "\(form): the refreshed token reaches the app proxy: \(again)")

        // Logout: the account picker, then back to the registered redirect URI with state.
        let logout = try await entra.run(
            ["iap", "logout", "--config", entra.config(form), "--browser-command", entra.browser, "--timeout", "30"],
            store, timeout: .seconds(60))
        #expect(logout.status == 0, "\(form): \(logout)")
        #expect(!logout.stderr.lowercased().contains("userinfo"), "\(form): \(logout)")
        #expect(
            logout.stderr.contains("refresh token"),
            "\(form): the report says the refresh token stays valid (Entra has no revocation endpoint): \(logout)")
        let logouts = try await entra.state()["logouts"]?.arrayValue ?? []
        #expect(logouts.count == 1 && logouts.first?["redirected"]?.boolValue == true, "\(logouts)")
        #expect(logouts.first?["state_sent"]?.boolValue == true, "the logout request carries state")
        #expect(!EntraSimulation.hasSignIn(store), "the sign-in is deleted")

        // UserInfo (Graph's) was never asked: it cannot answer for these tokens.
        let requests = try entra.requests(since: mark)
        #expect(!requests.contains { $0.host == "graph.microsoft.com" }, "\(form): \(requests.map(\.host))")
        for result in [login, request, refreshed, again, logout] {
            #expect(result.leaksNone(of: [idToken, access, refresh, rotated]))
            #expect(!result.stderr.contains("\r"))
        }
    }

    @Test("with the tenant's domain, the v2 discovery document of that authority gives the GUID issuer")
    func domainIssuer() async throws {
        let (entra, store) = try await EntraSimulation.fresh()
        let mark = try entra.mark()
        let login = try await entra.login("onmicrosoft", store)
        #expect(login.status == 0, "\(login)")
        #expect(
            !login.stderr.contains("expected https://login.microsoftonline.com/contoso.onmicrosoft.com"), "\(login)")
        let paths = try entra.requests(since: mark).map(\.path)
        #expect(
            paths.contains("/contoso.onmicrosoft.com/v2.0/.well-known/openid-configuration"),
            "the authority's own v2 document is read: \(paths)")
    }

    @Test("organizations: a user of another tenant signs in; status shows the tenant signed in to")
    func organizationsOtherTenant() async throws {
        let (entra, store) = try await EntraSimulation.fresh()
        try await entra.steer("next-user", ["upn": "bob@fabrikam.onmicrosoft.com"])
        let login = try await entra.login("organizations", store)
        #expect(login.status == 0, "\(login)")
        guard login.status == 0 else { return }
        let claims = try IDToken(compact: try EntraSimulation.stored("id_token", in: store))
        #expect(claims.tenantID == entra.otherTenantID)
        let status = try await entra.run(["status"], store)
        #expect(status.stdout.contains(entra.otherTenantID), "status names the tenant signed in to: \(status)")
    }

    @Test("common works as organizations does, or is refused before the browser opens, naming the form to use")
    func common() async throws {
        let (entra, store) = try await EntraSimulation.fresh()
        let login = try await entra.login("common", store, timeout: 15)
        if login.status == 0 {
            #expect(Self.isQuiet(login), "\(login)")
            let refreshed = try await entra.run(["refresh", "--iap", entra.config("common")], store)
            #expect(refreshed.status == 0, "\(refreshed)")
            let request = try await entra.run(["request", entra.app + "/data"], store)
            #expect(request.status == 0, "\(request)")
        } else {
            #expect(try await entra.count("authorize") == 0, "refused before the browser opens: \(login)")
            #expect(login.stderr.contains("organizations"), "the form to use is named: \(login)")
            #expect(!EntraSimulation.hasSignIn(store))
        }
    }

    @Test("consumers is refused before the browser opens, saying why")
    func consumers() async throws {
        let (entra, store) = try await EntraSimulation.fresh()
        let login = try await entra.login("consumers", store, timeout: 15)
        #expect(login.status != 0, "\(login)")
        #expect(try await entra.count("authorize") == 0, "refused before the browser opens: \(login)")
        #expect(login.stderr.contains("consumers"), "\(login)")
        #expect(!EntraSimulation.hasSignIn(store))
    }

    @Test("a national cloud (login.microsoftonline.us) signs in, refreshes and logs out with the same layout")
    func nationalCloud() async throws {
        let (entra, store) = try await EntraSimulation.fresh()
        let login = try await entra.login("usgov", store)
        #expect(login.status == 0, "\(login)")
        #expect(Self.isQuiet(login), "\(login)")
        guard login.status == 0 else { return }
        let claims = try IDToken(compact: try EntraSimulation.stored("id_token", in: store))
        #expect(claims.issuer == "https://login.microsoftonline.us/\(entra.govTenantID)/v2.0")
        let refreshed = try await entra.run(["refresh", "--iap", entra.config("usgov")], store)
        #expect(refreshed.status == 0, "\(refreshed)")
        let logout = try await entra.run(
            [
                "iap", "logout", "--config", entra.config("usgov"), "--browser-command", entra.browser, "--timeout",
                "30",
            ],
            store, timeout: .seconds(60))
        #expect(logout.status == 0, "\(logout)")
    }

    @Test("the device code: Entra's response (verification_uri, message, interval 5), then tokens")
    func deviceCode() async throws {
        let (entra, store) = try await EntraSimulation.fresh()
        let login = try await entra.run(
            ["iap", "login", "--config", entra.config("guid"), "--device-code", "--timeout", "40"], store,
            timeout: .seconds(70))
        #expect(login.status == 0, "\(login)")
        #expect(login.stderr.contains("https://microsoft.com/devicelogin"), "\(login)")
        #expect(try await entra.count("devicecode") == 1)
        #expect(EntraSimulation.hasSignIn(store))
    }

    // MARK: - Keys and forged tokens

    @Test("planned and emergency key rollovers are followed: the refreshed ID token signed by the new key is accepted")
    func keyRollover() async throws {
        let (entra, store) = try await EntraSimulation.fresh()
        let login = try await entra.login("guid", store)
        #expect(login.status == 0, "\(login)")
        for kind in ["planned", "emergency"] {
            let keys = try await entra.steer("rollover", ["kind": kind])
            let refreshed = try await entra.run(["refresh", "--iap", entra.config("guid")], store)
            #expect(refreshed.status == 0, "\(kind): \(refreshed)")
            let claims = try IDToken(compact: try EntraSimulation.stored("id_token", in: store))
            #expect(claims.keyID == keys["signing_kid"]?.stringValue, "\(kind)")
            let request = try await entra.run(["request", entra.app + "/data"], store)
            #expect(request.status == 0, "\(kind): \(request)")
        }
    }

    @Test(
        "a forged ID token is refused and nothing is stored: an unpublished key, a v1 issuer, another tenant's tid through organizations",
        arguments: [
            ("guid", "unpublished-key"), ("guid", "v1-issuer"), ("organizations", "other-tenant"),
            ("organizations", "unpublished-key"),
        ])
    func forgedIDToken(_ form: String, _ forgery: String) async throws {
        let (entra, store) = try await EntraSimulation.fresh()
        try await entra.steer("forge-next", ["kind": forgery])
        let login = try await entra.login(form, store)
        #expect(login.status == 65, "\(form), \(forgery): \(login)")
        #expect(!EntraSimulation.hasSignIn(store), "\(form), \(forgery)")
    }

    // MARK: - AADSTS errors and their fixes

    /// The errors of reference-error-codes.md that people meet, given on the token call after a sign-in (a refresh),
    /// with what the tool must say: the exit status (nil: any failure) and phrases naming the fix.
    static let tokenErrors: [(code: Int, exit: Int32?, phrases: [String])] = [
        (7_000_218, nil, ["Allow public client flows"]),
        (700016, nil, ["client_id"]),
        (65001, nil, ["admin consent"]),
        (50076, 77, ["portal-auth iap login"]),
        (50079, 77, ["portal-auth iap login"]),
        (700082, 77, ["portal-auth iap login"]),
        (50173, 77, ["portal-auth iap login"]),
        (53003, nil, ["Conditional Access", "administrator"]),
        (90002, nil, ["authorize_url"]),
    ]

    @Test(
        "each AADSTS error on refresh names its fix; the provider's text stays escaped, no secret shown",
        arguments: tokenErrors.map(\.code))
    func refreshErrors(_ code: Int) async throws {
        let expected = try #require(Self.tokenErrors.first { $0.code == code })
        let (entra, store) = try await EntraSimulation.fresh()
        let login = try await entra.login("guid", store)
        #expect(login.status == 0, "\(login)")
        guard login.status == 0 else { return }
        let secrets = try ["id_token", "access_token", "refresh_token"].map {
            try EntraSimulation.stored($0, in: store)
        }
        try await entra.steer("fail-next", ["code": "\(code)"])
        let refreshed = try await entra.run(["refresh", "--iap", entra.config("guid")], store)
        #expect(refreshed.status != 0, "AADSTS\(code): \(refreshed)")
        if let exit = expected.exit { #expect(refreshed.status == exit, "AADSTS\(code): \(refreshed)") }
        #expect(refreshed.stderr.contains("AADSTS\(code)"), "\(refreshed)")
        for phrase in expected.phrases {
            #expect(
                refreshed.stderr.localizedCaseInsensitiveContains(phrase),
                "AADSTS\(code): names \"\(phrase)\": \(refreshed)")
        }
        #expect(!refreshed.stderr.contains("\r"), "the CRLF trailer is not written raw")
        #expect(refreshed.leaksNone(of: secrets))
    }

    @Test("AADSTS7000218 when the code is redeemed for an app without public client flows: the setting is named")
    func publicClientFlowsOff() async throws {
        let (entra, store) = try await EntraSimulation.fresh()
        let login = try await entra.login("no-public-client", store)
        #expect(login.status != 0, "\(login)")
        #expect(login.stderr.contains("AADSTS7000218"), "\(login)")
        #expect(login.stderr.localizedCaseInsensitiveContains("Allow public client flows"), "\(login)")
        #expect(!login.stderr.contains("\r"))
        #expect(!EntraSimulation.hasSignIn(store))
    }

    @Test("AADSTS50011 shows only in the browser: the waiting message names it")
    func unregisteredRedirect() async throws {
        let (entra, store) = try await EntraSimulation.fresh()
        let login = try await entra.login("unregistered-redirect", store, timeout: 8)
        #expect(login.status != 0, "\(login)")
        #expect(try await entra.count("authorize") >= 1, "the browser showed Entra's error page")
        #expect(login.stderr.contains("AADSTS50011"), "the waiting message names the redirect URI error: \(login)")
        #expect(!EntraSimulation.hasSignIn(store))
    }

    @Test("AADSTS700016 (the client is not in the tenant) shows only on Entra's page: the tool names it and client_id")
    func unknownClient() async throws {
        let (entra, store) = try await EntraSimulation.fresh()
        let login = try await entra.login("unknown-client", store, timeout: 8)
        #expect(login.status != 0, "\(login)")
        #expect(login.stderr.contains("AADSTS700016"), "\(login)")
        #expect(login.stderr.contains("client_id"), "the key to fix is named: \(login)")
        #expect(!login.stderr.contains("\r"))
        #expect(!EntraSimulation.hasSignIn(store))
    }

    @Test("AADSTS90002 (unknown tenant) is found before the browser opens: the discovery document answers it")
    func unknownTenant() async throws {
        let (entra, store) = try await EntraSimulation.fresh()
        let login = try await entra.login("unknown-tenant", store, timeout: 10)
        #expect(login.status != 0, "\(login)")
        #expect(try await entra.count("authorize") == 0, "refused before the browser opens: \(login)")
        #expect(login.stderr.contains("AADSTS90002"), "\(login)")
        #expect(login.stderr.contains("authorize_url"), "the key to fix is named: \(login)")
        #expect(!login.stderr.contains("\r"))
    }
}
