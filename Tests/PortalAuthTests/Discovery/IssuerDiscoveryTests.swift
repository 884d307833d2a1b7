import Foundation
import Testing
@testable import PortalAuth
import PortalAuthTesting
@testable import PortalAuthCore
@testable import PortalAuthTransport

/// Finding and trusting the discovery document: walking up from the authorize URL, the provider table (Entra), an
/// explicit issuer, and a document that lies about its issuer or token endpoint (OpenID Connect Discovery §4.3,
/// rp-discovery-issuer-not-matching-config).
@Suite("Issuer discovery: where the document is, and when it is believed")
struct IssuerDiscoveryTests {
    /// A server answering `documents` (by discovery URL) and 404 to everything else; it records what was asked.
    static func server(_ documents: [String: JSONObject]) -> ScriptedHTTPClient {
        ScriptedHTTPClient { _, request in
            guard let document = documents[request.url.absoluteString] else {
                return TransportResponse(statusCode: 404, headers: [], body: Data(), url: request.url)
            }
            return TransportResponse(
                statusCode: 200, headers: [("Content-Type", "application/json")],
                body: Data(JSONValue.object(document).serialized(indent: 0).utf8), url: request.url)
        }
    }

    static func document(issuer: String, authorize: String, token: String? = nil, extra: JSONObject = [:]) -> JSONObject
    {
        var object = extra
        object["issuer"] = .string(issuer)
        object["authorization_endpoint"] = .string(authorize)
        object["token_endpoint"] = .string(token ?? authorize.replacingOccurrences(of: "/auth", with: "/token"))
        object["jwks_uri"] = .string(issuer + "/keys")
        return object
    }

    @Test(
        "Keycloak: /realms/R/protocol/openid-connect/auth finds /realms/R/.well-known/openid-configuration, asking each folder up"
    )
    func walksUp() async throws {
        let authorize = "https://kc.example/realms/maps/protocol/openid-connect/auth"
        let client = Self.server([
            "https://kc.example/realms/maps/.well-known/openid-configuration": Self.document(
                issuer: "https://kc.example/realms/maps", authorize: authorize,
                token: "https://kc.example/realms/maps/protocol/openid-connect/token")
        ])
        let issuer = try await IssuerDiscovery.issuer(forAuthorizeURL: URL(string: authorize)!, httpClient: client)
        #expect(issuer?.identifier == "https://kc.example/realms/maps")
        #expect(issuer?.metadata?.jwksURI?.absoluteString == "https://kc.example/realms/maps/keys")
        #expect(
            client.requests.map(\.url.absoluteString) == [
                "https://kc.example/realms/maps/protocol/openid-connect/.well-known/openid-configuration",
                "https://kc.example/realms/maps/protocol/.well-known/openid-configuration",
                "https://kc.example/realms/maps/.well-known/openid-configuration",
            ])
    }

    @Test(
        "a jwks_uri that cannot be used stops the sign-in, naming the document and the value (escaped); it is never taken as no key set",
        arguments: [
            (JSONValue.string("http://idp.example/keys"), "\"http://idp.example/keys\"", "must use https"),
            (
                .string("https://user:hunter2@idp.example/keys"),
                "https://idp.example/keys (user information left out)", "user name or password"
            ),
            (.string("/keys"), "\"/keys\"", "not an absolute URL"),
            (.string("keys.json"), "\"keys.json\"", "not an absolute URL"),
            (.string("\u{1B}]0;owned\u{7}/keys"), "\"\\u{1B}]0;owned\\u{7}/keys\"", "not an absolute URL"),
            (.string("ftp://idp.example/keys"), "\"ftp://idp.example/keys\"", "scheme"),
            (.integer(42), "42", "not a string"),
            (.null, "null", "not a string"),
        ])
    func unusableKeySet(value: JSONValue, shown: String, problem: String) async throws {
        let authorize = "https://idp.example/o/authorize"
        var document = Self.document(issuer: "https://idp.example/o", authorize: authorize)
        document["jwks_uri"] = value
        let client = Self.server([
            "https://idp.example/o/.well-known/openid-configuration": document
        ])
        // Before issue 36 the document was believed with no key set, and ID tokens went unchecked.
        let error = await #expect(throws: DiscoveryError.self) {
            _ = try await IssuerDiscovery.issuer(forAuthorizeURL: URL(string: authorize)!, httpClient: client)
        }
        let text = error?.description ?? ""
        #expect(
            text.contains(
                "https://idp.example/o/.well-known/openid-configuration names jwks_uri \(shown), which cannot be used"),
            "\(text)")
        #expect(text.contains(problem), "\(text)")
        #expect(!text.contains("hunter2") && !text.contains("\u{1B}"), "\(text)")
    }

    @Test(
        "a jwks_uri on a loopback host may be http (a local provider); a document without jwks_uri gives no key set (ID tokens are then refused)"
    )
    func usableOrAbsentKeySet() async throws {
        let authorize = "http://127.0.0.1:8000/o/authorize"
        var document = Self.document(issuer: "http://127.0.0.1:8000/o", authorize: authorize)
        let local = try await IssuerDiscovery.issuer(
            forAuthorizeURL: URL(string: authorize)!,
            httpClient: Self.server(["http://127.0.0.1:8000/o/.well-known/openid-configuration": document]))
        #expect(local?.metadata?.jwksURI?.absoluteString == "http://127.0.0.1:8000/o/keys")
        document["jwks_uri"] = nil
        let absent = try await IssuerDiscovery.issuer(
            forAuthorizeURL: URL(string: authorize)!,
            httpClient: Self.server(["http://127.0.0.1:8000/o/.well-known/openid-configuration": document]))
        #expect(absent?.metadata != nil && absent?.metadata?.jwksURI == nil)
    }

    @Test("a document of another provider on the way (another authorization_endpoint) is passed over")
    func otherProvidersDocumentSkipped() async throws {
        let authorize = "https://idp.example/tenant/oauth2/authorize"
        let client = Self.server([
            "https://idp.example/tenant/oauth2/.well-known/openid-configuration": Self.document(
                issuer: "https://idp.example/tenant/oauth2", authorize: "https://idp.example/tenant/oauth2/other"),
            "https://idp.example/.well-known/openid-configuration": Self.document(
                issuer: "https://idp.example", authorize: authorize),
        ])
        let issuer = try await IssuerDiscovery.issuer(forAuthorizeURL: URL(string: authorize)!, httpClient: client)
        #expect(issuer?.identifier == "https://idp.example")
        #expect(client.count == 3)
    }

    @Test(
        "a document naming the configured authorize endpoint but another issuer stops everything (rp-discovery-issuer-not-matching-config)"
    )
    func issuerNotMatching() async throws {
        let authorize = "https://a.example/oauth2/authorize"
        let client = Self.server([
            "https://a.example/oauth2/.well-known/openid-configuration": Self.document(
                issuer: "https://b.example", authorize: authorize)
        ])
        let error = await #expect(throws: DiscoveryError.self) {
            _ = try await IssuerDiscovery.issuer(forAuthorizeURL: URL(string: authorize)!, httpClient: client)
        }
        let text = error?.description ?? ""
        #expect(
            text.contains("https://b.example")
                && text.contains("https://a.example/oauth2/.well-known/openid-configuration"), "\(text)")
        #expect(text.contains("IAPConfiguration.issuer"))
    }

    @Test(
        "a document naming another token endpoint than the configured one gives a warning (the code goes to the configured one)"
    )
    func tokenEndpointNotMatching() async throws {
        let authorize = "https://idp.example/o/authorize"
        let client = Self.server([
            "https://idp.example/o/.well-known/openid-configuration": Self.document(
                issuer: "https://idp.example/o", authorize: authorize, token: "https://idp.example/o/token")
        ])
        let issuer = try await IssuerDiscovery.issuer(forAuthorizeURL: URL(string: authorize)!, httpClient: client)
        let warning = IssuerDiscovery.tokenEndpointWarning(
            issuer, tokenURL: URL(string: "https://thief.example/token")!)
        #expect(
            warning?.contains("https://thief.example/token") == true
                && warning?.contains("https://idp.example/o/token") == true)
        // The same URL written with a trailing slash or a default port is the same endpoint.
        #expect(
            IssuerDiscovery.tokenEndpointWarning(issuer, tokenURL: URL(string: "https://idp.example:443/o/token/")!)
                == nil)
    }

    @Test("an explicit issuer on another host (Cognito) is used, and its document must name the configured endpoints")
    func explicitIssuer() async throws {
        let authorize = "https://maps.auth.eu-west-1.amazoncognito.com/oauth2/authorize"
        let pool = "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Abc"
        let client = Self.server([
            pool + "/.well-known/openid-configuration": Self.document(
                issuer: pool, authorize: authorize, token: "https://maps.auth.eu-west-1.amazoncognito.com/oauth2/token")
        ])
        #expect(
            try await IssuerDiscovery.issuer(forAuthorizeURL: URL(string: authorize)!, httpClient: client) == nil,
            "nothing found by walking")
        let issuer = try await IssuerDiscovery.issuer(
            forAuthorizeURL: URL(string: authorize)!, explicit: URL(string: pool)!, httpClient: client)
        #expect(issuer?.identifier == pool)
        #expect(issuer?.metadata?.jwksURI != nil)

        await #expect(throws: DiscoveryError.self) {
            _ = try await IssuerDiscovery.issuer(
                forAuthorizeURL: URL(string: "https://other.example/oauth2/authorize")!, explicit: URL(string: pool)!,
                httpClient: client)
        }
        // An explicit issuer without a document is still the issuer expected.
        let bare = try await IssuerDiscovery.issuer(
            forAuthorizeURL: URL(string: authorize)!, explicit: URL(string: "https://issuer.example/x")!,
            httpClient: client)
        #expect(bare == IssuerDiscovery.Issuer(identifier: "https://issuer.example/x", sendsIssuerInResponses: false))
    }

    @Test("Microsoft Entra: the tenant's v2.0 document, read at /{tenant}/v2.0; without it, nothing is opened")
    func entra() async throws {
        let tenant = "3f2504e0-4f89-41d3-9a0c-0305e82c3301"
        let authorize = "https://login.microsoftonline.com/\(tenant)/oauth2/v2.0/authorize"
        let issuerURL = "https://login.microsoftonline.com/\(tenant)/v2.0"
        let client = Self.server([
            issuerURL + "/.well-known/openid-configuration": Self.document(
                issuer: issuerURL, authorize: authorize,
                token: "https://login.microsoftonline.com/\(tenant)/oauth2/v2.0/token")
        ])
        let issuer = try await IssuerDiscovery.issuer(forAuthorizeURL: URL(string: authorize)!, httpClient: client)
        #expect(issuer?.identifier == issuerURL)
        #expect(issuer?.metadata?.jwksURI?.absoluteString == issuerURL + "/keys")
        #expect(client.requests.count == 1, "one document, no walk")
        // Unreachable: the sign-in stops before the browser (the issuer and keys would be unknown).
        let offline = await #expect(throws: DiscoveryError.self) {
            try await IssuerDiscovery.issuer(forAuthorizeURL: URL(string: authorize)!, httpClient: Self.server([:]))
        }
        #expect(offline?.description.contains("\(issuerURL)/.well-known/openid-configuration") == true)
    }

    @Test("candidate issuers: from the authorize URL's folder up to the origin, without query")
    func candidates() {
        #expect(
            IssuerDiscovery.candidateIssuers(URL(string: "https://h.example:8443/a/b/authorize/?x=1")!) == [
                "https://h.example:8443/a/b", "https://h.example:8443/a", "https://h.example:8443",
            ])
        #expect(
            IssuerDiscovery.discoveryURL(forIssuer: "https://h.example/")?.absoluteString
                == "https://h.example/.well-known/openid-configuration")
    }

    @Test(
        "sign-out's endpoints: read from the sign-in's issuer's document (LemonLDAP::NG: /oauth2/authorize, its issuer the origin)"
    )
    func signOutEndpointsOfTheIssuer() async throws {
        let authorize = "https://auth.example/oauth2/authorize"
        let client = Self.server([
            "https://auth.example/.well-known/openid-configuration": Self.document(
                issuer: "https://auth.example", authorize: authorize, token: "https://auth.example/oauth2/token",
                extra: [
                    "userinfo_endpoint": .string("https://auth.example/oauth2/userinfo"),
                    "revocation_endpoint": .string("https://auth.example/oauth2/revoke"),
                ])
        ])
        let endpoints = await RevocationEndpointDiscovery.endpoints(
            issuer: "https://auth.example", authorizeURL: try #require(URL(string: authorize)), httpClient: client)
        #expect(endpoints.userInfo?.absoluteString == "https://auth.example/oauth2/userinfo")
        #expect(endpoints.revocation?.absoluteString == "https://auth.example/oauth2/revoke")
        // A document that describes another authorize endpoint is not believed.
        let other = Self.server([
            "https://auth.example/.well-known/openid-configuration": Self.document(
                issuer: "https://auth.example", authorize: "https://auth.example/other/authorize",
                extra: ["userinfo_endpoint": .string("https://auth.example/oauth2/userinfo")])
        ])
        #expect(
            await RevocationEndpointDiscovery.endpoints(
                issuer: "https://auth.example", authorizeURL: try #require(URL(string: authorize)), httpClient: other)
                == .init())
        // No issuer known: no document is read at all.
        #expect(
            await RevocationEndpointDiscovery.endpoints(
                issuer: nil, authorizeURL: try #require(URL(string: authorize)), httpClient: client) == .init())
    }
}
