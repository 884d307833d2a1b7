import Foundation
import Synchronization
import Testing
@testable import PortalAuth
import PortalAuthTesting
@testable import PortalAuthCore
@testable import PortalAuthTransport

/// Microsoft Entra ID's tenant forms and clouds (issue 44): the expected issuer from the v2.0 discovery document of
/// the configured authority (MicrosoftDocs/entra-docs `v2-protocols-oidc.md`), `organizations`/`common` by the
/// issuer template with the token's `tid` substituted (as Microsoft.IdentityModel's AadIssuerValidator and MSAL do),
/// `consumers` refused before the browser opens, national clouds on their own hosts, and forged ID tokens refused.
@Suite("Microsoft Entra ID: tenant forms, organizations and common, national clouds")
struct EntraDiscoveryTests {
    typealias F = EntraFixtures

    /// Entra as `v2-protocols-oidc.md` documents it on `host`: for every tenant form the v2.0 document at
    /// `/{tenant}/v2.0/.well-known/openid-configuration` (domains resolve to `F.tenant`; `organizations` and `common`
    /// name the issuer template and their own endpoints), the v1.0 document at `/{tenant}/.well-known/…` (issuer
    /// `https://sts.windows.net/{tid}/`), the keys at `/{tenant}/discovery/v2.0/keys`, Graph's UserInfo answering 401.
    static func entra(host: String = "login.microsoftonline.com") -> ScriptedHTTPClient {
        ScriptedHTTPClient { _, request in
            func json(_ text: String, status: Int = 200) -> TransportResponse {
                TransportResponse(
                    statusCode: status, headers: [("Content-Type", "application/json")], body: Data(text.utf8),
                    url: request.url)
            }
            let parts = request.url.path.split(separator: "/").map(String.init)
            guard request.url.host == host, let first = parts.first else {
                return json(#"{"error":"invalid_token"}"#, status: 401)
            }
            let multi = ["organizations", "common"].contains(first.lowercased())
            let tenant = multi ? first : F.tenant
            let issuer = multi ? "https://\(host)/{tenantid}/v2.0" : "https://\(host)/\(F.tenant)/v2.0"
            switch parts.dropFirst().joined(separator: "/") {
            case "v2.0/.well-known/openid-configuration":
                guard first.hasSuffix(".onmicrosoft.com") || first == "contoso.com" || first == F.tenant || multi
                else { return json(#"{"error":"invalid_tenant","error_codes":[90002]}"#, status: 400) }
                return json(
                    """
                    {"issuer":"\(issuer)","authorization_endpoint":"https://\(host)/\(tenant)/oauth2/v2.0/authorize",
                     "token_endpoint":"https://\(host)/\(tenant)/oauth2/v2.0/token",
                     "jwks_uri":"https://\(host)/\(tenant)/discovery/v2.0/keys",
                     "userinfo_endpoint":"https://graph.microsoft.com/oidc/userinfo",
                     "end_session_endpoint":"https://\(host)/\(tenant)/oauth2/v2.0/logout",
                     "id_token_signing_alg_values_supported":["RS256"]}
                    """)
            case ".well-known/openid-configuration":
                return json(
                    """
                    {"issuer":"https://sts.windows.net/\(F.tenant)/","authorization_endpoint":"https://\(host)/\(tenant)/oauth2/authorize",
                     "jwks_uri":"https://\(host)/\(tenant)/discovery/keys"}
                    """)
            case "discovery/v2.0/keys":
                return json(F.keySet)
            default:
                return json("", status: 404)
            }
        }
    }

    /// The seed's IAP configuration for `tenant` on `host`.
    static func configuration(tenant: String, host: String = "login.microsoftonline.com", issuer: URL? = nil)
        -> IAPConfiguration
    {
        let base = "https://\(host)/\(tenant)/oauth2/v2.0/"
        var configuration = IAPConfiguration(
            authorizeURL: URL(string: base + "authorize")!, tokenURL: URL(string: base + "token")!,
            logoutURL: URL(string: base + "logout")!, clientID: F.client,
            redirectURL: URL(string: "http://localhost/callback")!,
            scopes: [F.client + "/.default", "offline_access", "openid", "profile"],
            hostsBehindProxy: ["*.msappproxy.net"], authorizationPromptType: .unspecified, sourceFile: nil)
        configuration.issuer = issuer
        return configuration
    }

    /// Records the warnings a sign-in reports.
    final class Warnings: SignInObserver {
        private let recorded = Mutex<[String]>([])
        var all: [String] { recorded.withLock { $0 } }
        func configurationWarning(_ message: String) { recorded.withLock { $0.append(message) } }
    }

    /// What the sign-in does before the browser (the issuer), then with the token endpoint's answer `idToken`.
    static func signIn(
        _ configuration: IAPConfiguration, idToken: String, http: ScriptedHTTPClient,
        observer: any SignInObserver = SilentSignInObserver()
    ) async throws -> IAPCredential {
        let issuer = try await IssuerDiscovery.issuer(
            forAuthorizeURL: configuration.authorizeURL, explicit: configuration.issuer, httpClient: http)
        return try await IAPCredential.signedIn(
            configuration,
            tokens: TokenResponse(
                accessToken: "ACCESS-APP-PROXY", expiresIn: .seconds(3600), refreshToken: "REFRESH-1",
                idToken: idToken),
            nonce: nil, issuer: issuer, receivedAt: F.now,
            settings: SignInSettings(observer: observer, httpClient: http))
    }

    @Test(
        "a tenant written as its domain (*.onmicrosoft.com, a custom domain): the issuer is the GUID one its v2.0 document names",
        arguments: ["contoso.onmicrosoft.com", "contoso.com", F.tenant])
    func domainTenant(tenant: String) async throws {
        let http = Self.entra()
        let configuration = Self.configuration(tenant: tenant)
        let credential = try await Self.signIn(configuration, idToken: F.t1, http: http)
        #expect(credential.username == "alice@contoso.com")
        // The document names the token endpoint with the tenant's ID: the same endpoint, no warning.
        let issuer = try await IssuerDiscovery.issuer(forAuthorizeURL: configuration.authorizeURL, httpClient: http)
        #expect(IssuerDiscovery.tokenEndpointWarning(issuer, tokenURL: configuration.tokenURL) == nil)
        #expect(
            IssuerDiscovery.tokenEndpointWarning(
                issuer, tokenURL: URL(string: "https://login.microsoftonline.com/other.example/oauth2/v2.0/token")!)
                != nil)
        #expect(
            http.requests.first?.url.absoluteString
                == "https://login.microsoftonline.com/\(tenant)/v2.0/.well-known/openid-configuration",
            "the v2.0 document of the configured authority, not the v1.0 one a walk finds first")
        // Another tenant's token is refused.
        await #expect(throws: IDTokenError.self) {
            _ = try await Self.signIn(Self.configuration(tenant: tenant), idToken: F.t2, http: Self.entra())
        }
    }

    @Test(
        "organizations and common: iss checked against the template with the token's tid; the keys of the authority's own endpoint",
        arguments: ["organizations", "common"])
    func multiTenant(authority: String) async throws {
        let http = Self.entra()
        let credential = try await Self.signIn(Self.configuration(tenant: authority), idToken: F.t1, http: http)
        #expect(credential.username == "alice@contoso.com")
        #expect(
            credential.keeper.current.jwksURI?.absoluteString
                == "https://login.microsoftonline.com/\(authority)/discovery/v2.0/keys")
        #expect(credential.keeper.current.issuer == "https://login.microsoftonline.com/\(F.tenant)/v2.0")
        #expect(CredentialSummary(credential.keeper.current).entraTenantID == F.tenant, "status shows the tenant")
        let other = try await Self.signIn(Self.configuration(tenant: authority), idToken: F.t2, http: Self.entra())
        #expect(other.username == "alice@contoso.com", "any directory's user through \(authority)")
    }

    @Test(
        "forged ID tokens are refused through organizations: another tenant's tid, a v1 issuer, an unpublished key, no tid",
        arguments: [
            (F.t1IssuerT2Tid, "iss"), (F.v1, "iss"), (F.unpublishedKey, "signature"), (F.noTid, "tid"),
        ])
    func forged(token: String, claim: String) async throws {
        let error = await #expect(throws: IDTokenError.self) {
            _ = try await Self.signIn(Self.configuration(tenant: "organizations"), idToken: token, http: Self.entra())
        }
        #expect(error?.description.contains(claim) == true, "\(String(describing: error))")
    }

    @Test("common: a personal Microsoft account's token (the consumer tenant) is refused, saying why")
    func personalAccountThroughCommon() async throws {
        let error = await #expect(throws: IDTokenError.self) {
            _ = try await Self.signIn(Self.configuration(tenant: "common"), idToken: F.personal, http: Self.entra())
        }
        #expect(error?.description.contains("personal Microsoft account") == true, "\(String(describing: error))")
    }

    @Test("consumers is refused before anything is asked (before the browser), naming the forms to use")
    func consumersRefused() async throws {
        let http = Self.entra()
        let error = await #expect(throws: DiscoveryError.self) {
            _ = try await IssuerDiscovery.issuer(
                forAuthorizeURL: Self.configuration(tenant: "consumers").authorizeURL, httpClient: http)
        }
        #expect(error?.description.contains("organizations") == true, "\(String(describing: error))")
        #expect(http.requests.isEmpty)
        // IAPConfiguration.microsoft(tenantID:) says so when the configuration is made.
        let made = #expect(throws: ConfigurationError.self) {
            _ = try IAPConfiguration.microsoft(
                tenantID: "consumers", clientID: F.client, redirectURL: URL(string: "http://localhost/callback")!,
                hostsBehindProxy: ["*.msappproxy.net"])
        }
        #expect(made?.issues.first?.message.contains("personal Microsoft accounts") == true)
    }

    @Test("the issuer given explicitly pins organizations to one tenant; the authority's own template is accepted")
    func pinnedTenant() async throws {
        let pinned = URL(string: "https://login.microsoftonline.com/\(F.tenant)/v2.0")!
        let configuration = Self.configuration(tenant: "organizations", issuer: pinned)
        _ = try await Self.signIn(configuration, idToken: F.t1, http: Self.entra())
        await #expect(throws: IDTokenError.self) {
            _ = try await Self.signIn(configuration, idToken: F.t2, http: Self.entra())
        }
        let template = Self.configuration(
            tenant: "common", issuer: URL(string: "https://login.microsoftonline.com/common/v2.0")!)
        _ = try await Self.signIn(template, idToken: F.t2, http: Self.entra())
        // A tenant-specific authority given another tenant's issuer: refused before the browser.
        await #expect(throws: DiscoveryError.self) {
            _ = try await IssuerDiscovery.issuer(
                forAuthorizeURL: Self.configuration(tenant: "contoso.onmicrosoft.com").authorizeURL,
                explicit: URL(string: "https://login.microsoftonline.com/\(F.otherTenant)/v2.0")!,
                httpClient: Self.entra())
        }
    }

    @Test(
        "national clouds: the same layout on login.microsoftonline.us (discovery, issuer, device code, refresh scope)")
    func nationalCloud() async throws {
        let host = "login.microsoftonline.us"
        let http = Self.entra(host: host)
        let configuration = Self.configuration(tenant: "contoso.onmicrosoft.com", host: host)
        let credential = try await Self.signIn(configuration, idToken: F.usT1, http: http)
        #expect(http.requests.allSatisfy { $0.url.host == host })
        #expect(
            DeviceAuthorizationEndpoint.entra(configuration.authorizeURL)?.absoluteString
                == "https://\(host)/contoso.onmicrosoft.com/oauth2/v2.0/devicecode")
        #expect(TokenKeeper.refreshScope(credential.keeper.current) != nil, "Entra's refresh needs scope")
        #expect(configuration.isMicrosoftEntra)
        // The global cloud's token is not this cloud's.
        await #expect(throws: IDTokenError.self) {
            _ = try await Self.signIn(configuration, idToken: F.t1, http: Self.entra(host: host))
        }
    }

    @Test("no noise: Graph's UserInfo is not asked with the application proxy's token, and no warning is given")
    func noUserInfoWarning() async throws {
        let http = Self.entra()
        let warnings = Warnings()
        _ = try await Self.signIn(
            Self.configuration(tenant: F.tenant), idToken: F.t1, http: http, observer: warnings)
        #expect(warnings.all.isEmpty, "\(warnings.all)")
        #expect(!http.requests.contains { $0.url.host == "graph.microsoft.com" })
    }
}
