import Foundation
import Synchronization
import Testing
@testable import PortalAuth
import PortalAuthTesting
@testable import PortalAuthCore
@testable import PortalAuthStore
@testable import PortalAuthTransport

/// Issue 25.1, the mix-up attack (RFC 9700 §4.4): a hostile provider A relays the user's sign-in to an honest
/// provider B, which redirects back with its code and `iss`. Whatever A's discovery document says (B's issuer, or
/// nothing at all), B's code and the PKCE verifier must never reach A's token endpoint.
@Suite("Mix-up attack: a hostile provider relaying to an honest one gets no code")
struct MixUpAttackTests {
    static let hostileAuthorize = URL(string: "https://a.example/oauth2/authorize")!
    static let hostileToken = URL(string: "https://a.example/oauth2/token")!
    static let honestIssuer = "https://b.example"

    /// Both providers behind one scripted network: A's discovery document is `hostileDocument` (404 when nil),
    /// B's is honest. The browser goes to A, which sends it on to B; B signs the user in and redirects back with
    /// its code and its `iss`.
    struct Network {
        let http: ScriptedHTTPClient
        let browser: SignOutFakes.Browser

        init(hostileDocument: JSONObject?) {
            http = ScriptedHTTPClient { _, request in
                let url = request.url.absoluteString
                if url == "https://a.example/oauth2/.well-known/openid-configuration", let hostileDocument {
                    return TransportResponse(
                        statusCode: 200, headers: [("Content-Type", "application/json")],
                        body: Data(JSONValue.object(hostileDocument).serialized(indent: 0).utf8), url: request.url)
                }
                if request.url.path.hasSuffix("/authorize") {
                    return TransportResponse(
                        statusCode: 200, headers: [("Content-Type", "text/html")],
                        body: Data("<title>Sign in</title>".utf8), url: request.url)
                }
                if request.url.path.hasSuffix("/token") {
                    // Were it asked, A would redeem B's code with the verifier at B.
                    let idToken = IDTokenTests.token(
                        IDTokenTests.payload(
                            aud: .string("iap-client"), nonce: nil, exp: Date().timeIntervalSince1970 + 3600,
                            iss: MixUpAttackTests.honestIssuer,
                            iat: Date().timeIntervalSince1970))
                    let body =
                        #"{"access_token":"VICTIM-ACCESS","token_type":"Bearer","expires_in":3600,"id_token":"\#(idToken)"}"#
                    return TransportResponse(
                        statusCode: 200, headers: [("Content-Type", "application/json")], body: Data(body.utf8),
                        url: request.url)
                }
                return TransportResponse(statusCode: 404, headers: [], body: Data(), url: request.url)
            }
            browser = SignOutFakes.Browser { url in
                // A relays to B with the same state and redirect; B answers the redirect with its own code and iss.
                let query = SignOutFakes.query(of: url)
                guard let redirect = query["redirect_uri"], let state = query["state"],
                    let back = URL(string: "\(redirect)?code=B-CODE&state=\(state)&iss=https%3A%2F%2Fb.example")
                else { return }
                _ = try? await CurlHTTPClient().send(.get(back))
            }
        }

        /// The requests that reached A's token endpoint (each would carry B's code and the verifier).
        var codeExchanges: [TransportRequest] { http.requests.filter { $0.url == MixUpAttackTests.hostileToken } }
    }

    static func configuration() throws -> IAPConfiguration {
        try IAPConfiguration.configuration(
            authorizeURL: hostileAuthorize, tokenURL: hostileToken,
            logoutURL: URL(string: "https://a.example/oauth2/logout")!,
            clientID: "iap-client", redirectURL: URL(string: "http://127.0.0.1/callback")!, scopes: ["openid"],
            hostsBehindProxy: ["maps.example"])
    }

    static func signIn(_ network: Network) async throws {
        let settings = SignInSettings(
            browser: network.browser, timeout: .seconds(60), observer: SilentSignInObserver(), httpClient: network.http,
            environment: SignInEnvironment(hasDisplay: true, isSSHSession: false, hasForwardedDisplay: false))
        _ = try await IAPCredential.credential(for: configuration(), settings: settings)
    }

    @Test(
        "A's discovery document claims B's issuer: refused before the browser opens, nothing sent to A's token endpoint"
    )
    func lyingDiscoveryDocument() async throws {
        let network = Network(hostileDocument: [
            "issuer": .string(Self.honestIssuer),
            "authorization_endpoint": .string(Self.hostileAuthorize.absoluteString),
            "token_endpoint": .string(Self.hostileToken.absoluteString),
            "authorization_response_iss_parameter_supported": .bool(true),
        ])
        await #expect(throws: DiscoveryError.self) { try await Self.signIn(network) }
        #expect(network.browser.urls.isEmpty, "the browser opened")
        #expect(network.codeExchanges.isEmpty, "B's code and the PKCE verifier went to A's token endpoint")
    }

    @Test("A has no discovery document: B's iss (another origin) is refused, nothing sent to A's token endpoint")
    func noDiscoveryDocument() async throws {
        let network = Network(hostileDocument: nil)
        let error = await #expect(throws: LoopbackError.self) { try await Self.signIn(network) }
        #expect(error?.description.contains(Self.honestIssuer) == true, "\(String(describing: error))")
        #expect(network.browser.urls.count == 1)
        #expect(network.codeExchanges.isEmpty, "B's code and the PKCE verifier went to A's token endpoint")
    }

    @Test("control: with A's own genuine document, B's redirect is refused all the same (RFC 9207)")
    func honestProvider() async throws {
        let network = Network(hostileDocument: [
            "issuer": .string("https://a.example/oauth2"),
            "authorization_endpoint": .string(Self.hostileAuthorize.absoluteString),
            "token_endpoint": .string(Self.hostileToken.absoluteString),
        ])
        // The provider answers with iss B, so even a genuine document for A makes the redirect refused (RFC 9207).
        await #expect(throws: LoopbackError.self) { try await Self.signIn(network) }
        #expect(network.codeExchanges.isEmpty)
    }
}

/// With no issuer known (no discovery document, no explicit issuer), an ID token whose `iss` has another origin than
/// the authorize endpoint names another provider (issue 26: `iss: https://example.org/` was accepted and stored).
@Suite("No issuer known: the ID token's iss must have the authorize endpoint's origin")
struct UnknownIssuerOriginTests {
    /// A provider without a discovery document (unless `discovery` names the issuer of one) whose ID token says `iss`.
    static func provider(iss: String, discovery: String? = nil) -> IAPSignInConformanceTests.Provider {
        IAPSignInConformanceTests.Provider(discovery: discovery) { nonce in
            let idToken = IDTokenTests.token(
                IDTokenTests.payload(
                    aud: .string("iap-client"), nonce: nonce, exp: Date().timeIntervalSince1970 + 3600, iss: iss,
                    iat: Date().timeIntervalSince1970))
            return #"{"access_token":"ACCESS-1","token_type":"Bearer","expires_in":3600,"id_token":"\#(idToken)"}"#
        }
    }

    @Test(
        "another origin is refused as such, nothing is kept; the authorize endpoint's origin passes, and the unverified signature refuses the token then (issue 36: fail closed)",
        arguments: [
            ("https://example.org/", false), ("https://idp.example:8443/oauth2", false),
            ("http://idp.example/oauth2", false),
            ("https://idp.example/other/tenant", true),
        ])
    func origin(iss: String, sameOrigin: Bool) async throws {
        let provider = Self.provider(iss: iss)
        let settings = IAPSignInConformanceTests.settings(provider)
        let error = await #expect(throws: IDTokenError.self) {
            _ = try await IAPCredential.credential(for: IAPSignInConformanceTests.configuration(), settings: settings)
        }
        let expected = sameOrigin ? "signature" : "another origin"
        #expect(error?.description.contains(expected) == true, "\(String(describing: error))")
    }

    @Test("an explicit issuer (Cognito: on another host) is the one expected")
    func explicitIssuer() async throws {
        var configuration = try IAPSignInConformanceTests.configuration()
        configuration.issuer = URL(string: "https://example.org/pool")!
        let pool = "https://example.org/pool"
        _ = try await IAPCredential.credential(
            for: configuration, settings: IAPSignInConformanceTests.settings(Self.provider(iss: pool, discovery: pool)))
        await #expect(throws: IDTokenError.self) {
            _ = try await IAPCredential.credential(
                for: configuration,
                settings: IAPSignInConformanceTests.settings(
                    Self.provider(iss: "https://example.org/", discovery: pool)))
        }
    }
}
