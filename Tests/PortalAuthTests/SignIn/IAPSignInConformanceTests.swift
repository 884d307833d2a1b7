import Foundation
import Synchronization
import Testing
@testable import PortalAuth
import PortalAuthTesting
@testable import PortalAuthCore
@testable import PortalAuthStore
@testable import PortalAuthTransport

/// The IAP sign-in against a scripted OpenID provider: what goes to the authorization endpoint (`id_token_hint` with
/// `prompt=none`), which token responses are accepted (an ID token is required with `openid`), and which scopes are
/// stored and sent again on a refresh (issue 11: defects found against Glewlwyd).
@Suite("IAP sign-in conformance: id_token_hint, required ID token, granted scopes")
struct IAPSignInConformanceTests {
    static let authorizeURL = URL(string: "https://idp.example/oauth2/authorize")!
    static let tokenURL = URL(string: "https://idp.example/oauth2/token")!

    /// A provider: the browser half answers the authorization request with a code; the HTTP half answers discovery
    /// for the issuer `discovery` with a document that lists the unsigned ID tokens of `IDTokenTests.token` (404 for
    /// any other, and without `discovery`) and the code with `tokens(nonce)`.
    final class Provider: Sendable {
        /// What the browser saw: the authorization URLs and the last nonce.
        final class Seen: Sendable {
            let urls = Mutex<[URL]>([])
            let nonce = Mutex<String?>(nil)
        }
        let seen = Seen()
        let http: ScriptedHTTPClient

        var authorizationURLs: [URL] { seen.urls.withLock { $0 } }

        /// - Parameter authorize: the answer to a request for the authorization URL without a browser (the
        ///   pre-browser check); by default a sign-in page.
        init(
            discovery: String? = "https://idp.example/oauth2", authorize: (@Sendable (URL) -> TransportResponse)? = nil,
            tokens: @escaping @Sendable (_ nonce: String?) -> String
        ) {
            let seen = self.seen
            http = ScriptedHTTPClient { _, request in
                if request.url.path.hasSuffix("/authorize") {
                    return authorize?(request.url)
                        ?? TransportResponse(
                            statusCode: 200, headers: [("Content-Type", "text/html")],
                            body: Data("<title>Sign in</title>".utf8), url: request.url)
                }
                if request.url.path.hasSuffix("openid-configuration") {
                    guard let discovery, request.url.absoluteString == discovery + "/.well-known/openid-configuration"
                    else {
                        return TransportResponse(statusCode: 404, headers: [], body: Data(), url: request.url)
                    }
                    let document: JSONValue = .object([
                        "issuer": .string(discovery),
                        "authorization_endpoint": .string(IAPSignInConformanceTests.authorizeURL.absoluteString),
                        "token_endpoint": .string(IAPSignInConformanceTests.tokenURL.absoluteString),
                        "id_token_signing_alg_values_supported": IDTokenTests.signsWithNone,
                    ])
                    return TransportResponse(
                        statusCode: 200, headers: [("Content-Type", "application/json")],
                        body: Data(document.serialized(indent: 0).utf8), url: request.url)
                }
                return TransportResponse(
                    statusCode: 200, headers: [("Content-Type", "application/json")],
                    body: Data(tokens(seen.nonce.withLock { $0 }).utf8), url: request.url)
            }
        }

        var browser: SignOutFakes.Browser {
            SignOutFakes.Browser { [seen] url in
                seen.urls.withLock { $0.append(url) }
                let query = SignOutFakes.query(of: url)
                seen.nonce.withLock { $0 = query["nonce"] }
                guard let redirect = query["redirect_uri"], let state = query["state"],
                    let back = URL(string: "\(redirect)?code=CODE-1&state=\(state)")
                else { return }
                _ = try? await CurlHTTPClient().send(.get(back))
            }
        }
    }

    static func idToken(nonce: String?) -> String {
        var object: JSONObject = [
            "iss": .string("https://idp.example/oauth2"), "aud": .string("iap-client"),
            "exp": .number(Date().timeIntervalSince1970 + 3600), "iat": .number(Date().timeIntervalSince1970),
            "sub": .string("42"),
            "preferred_username": .string("alice"),
        ]
        if let nonce { object["nonce"] = .string(nonce) }
        return IDTokenTests.token(.object(object))
    }

    static func configuration(
        prompt: IAPAuthorizationPromptType = .unspecified, scopes: [String] = ["openid", "offline_access"]
    ) throws -> IAPConfiguration {
        try IAPConfiguration.configuration(
            authorizeURL: authorizeURL, tokenURL: tokenURL,
            logoutURL: URL(string: "https://idp.example/oauth2/logout")!,
            clientID: "iap-client", redirectURL: URL(string: "http://127.0.0.1/callback")!, scopes: scopes,
            hostsBehindProxy: ["maps.example"], authorizationPromptType: prompt)
    }

    static func settings(_ provider: Provider, observer: any SignInObserver = SilentSignInObserver()) -> SignInSettings
    {
        // A desktop: the fake browser stands for one that can be seen (no remote path).
        SignInSettings(
            browser: provider.browser, timeout: .seconds(60), observer: observer, httpClient: provider.http,
            environment: SignInEnvironment(hasDisplay: true, isSSHSession: false, hasForwardedDisplay: false))
    }

    /// A provider giving an ID token with the request's nonce, and `scope` when given.
    static func goodProvider(scope: String? = nil, authorize: (@Sendable (URL) -> TransportResponse)? = nil) -> Provider
    {
        Provider(authorize: authorize) { nonce in
            var object: JSONObject = [
                "access_token": .string("ACCESS-1"), "token_type": .string("Bearer"), "expires_in": .integer(3600),
                "refresh_token": .string("REFRESH-1"), "id_token": .string(idToken(nonce: nonce)),
            ]
            if let scope { object["scope"] = .string(scope) }
            return JSONValue.object(object).serialized(indent: 0)
        }
    }

    // MARK: - id_token_hint (OIDC Core 3.1.2.1)

    @Test("prompt=none sends the stored sign-in's ID token as id_token_hint, to the browser only")
    func hintWithPromptNone() async throws {
        let first = Self.goodProvider()
        let previous = try await IAPCredential.credential(for: Self.configuration(), settings: Self.settings(first))
        let heldIDToken = try #require(try await previous.tokenInfo.idToken)

        let second = Self.goodProvider()
        let observer = SignOutFakes.Observer()
        _ = try await IAPCredential.credential(
            for: Self.configuration(prompt: .none), settings: Self.settings(second, observer: observer),
            replacing: previous)
        let opened = try #require(second.authorizationURLs.first)
        let query = SignOutFakes.query(of: opened)
        #expect(query["prompt"] == "none")
        #expect(query["id_token_hint"] == heldIDToken)
        let shown = try #require(observer.urls.first)
        #expect(SignOutFakes.query(of: shown)["id_token_hint"] == nil, "the terminal never shows the ID token")
        #expect(SignOutFakes.query(of: shown)["state"] == query["state"])
    }

    @Test("no hint without a stored sign-in, nor with another prompt type", arguments: ["none", "login", ""])
    func noHint(promptName: String) async throws {
        let prompt = try #require(IAPAuthorizationPromptType(rawValue: promptName))
        let first = Self.goodProvider()
        let previous = try await IAPCredential.credential(for: Self.configuration(), settings: Self.settings(first))
        let second = Self.goodProvider()
        _ = try await IAPCredential.credential(
            for: Self.configuration(prompt: prompt), settings: Self.settings(second),
            replacing: prompt == .none ? nil : previous)
        let opened = try #require(second.authorizationURLs.first)
        #expect(SignOutFakes.query(of: opened)["id_token_hint"] == nil)
    }

    // MARK: - The ID token is required with openid (OIDC Core 3.1.3.3)

    @Test("a token response without id_token is refused when openid was asked for")
    func missingIDTokenRefused() async throws {
        let provider = Provider { _ in #"{"access_token":"ACCESS-1","token_type":"Bearer","expires_in":3600}"# }
        let error = await #expect(throws: SignInError.self) {
            _ = try await IAPCredential.credential(for: Self.configuration(), settings: Self.settings(provider))
        }
        let message = error?.description ?? ""
        #expect(message.contains("id_token") && message.contains("openid"))
        #expect(message.contains(Self.tokenURL.absoluteString))
        #expect(!message.contains("ACCESS-1"))
        #expect(error?.category == .invalidContent)
    }

    @Test("without openid in the scopes, no ID token is needed")
    func noOpenIDNoIDToken() async throws {
        let provider = Provider { _ in #"{"access_token":"ACCESS-1","token_type":"Bearer","expires_in":3600}"# }
        let credential = try await IAPCredential.credential(
            for: Self.configuration(scopes: ["api.read"]), settings: Self.settings(provider))
        #expect(try await credential.tokenInfo.accessToken == "ACCESS-1")
    }

    // MARK: - Granted scopes (RFC 6749 §3.3, §5.1, §6)

    @Test("the scopes the response grants are stored, not the ones asked for; none stated keeps what was asked for")
    func grantedScopesStored() async throws {
        let narrowed = Self.goodProvider(scope: "openid profile")
        let credential = try await IAPCredential.credential(
            for: Self.configuration(scopes: ["openid", "offline_access", "api.write"]),
            settings: Self.settings(narrowed))
        #expect(credential.keeper.current.scopes == ["openid", "profile"])
        #expect(credential.keeper.current.requestedScopes == ["openid", "offline_access", "api.write"])
        #expect(try await credential.tokenInfo.scopes == ["openid", "profile"])

        let unstated = Self.goodProvider()
        let plain = try await IAPCredential.credential(for: Self.configuration(), settings: Self.settings(unstated))
        #expect(plain.keeper.current.scopes == ["openid", "offline_access"])
    }

    @Test("a refresh sends no scope, so it never asks for scopes that were not granted")
    func refreshSendsNoScope() async throws {
        var record = TokenKeeperTests.record(.iap)
        record.scopes = ["openid", "profile"]
        record.requestedScopes = ["openid", "offline_access", "api.write"]
        let client = ScriptedHTTPClient([ScriptedHTTPClient.tokens("access-2", refresh: "refresh-2")])
        _ = try await TokenKeeperTests.keeper(record, client).validCredential()
        let fields = SignOutFakes.fields(of: try #require(client.requests.first))
        #expect(fields["grant_type"] == "refresh_token")
        #expect(fields["scope"] == nil)
    }

    @Test(
        "Microsoft Entra ID, which requires scope on a refresh, gets the scopes asked for at sign-in (.default stays .default)"
    )
    func entraRefreshScope() async throws {
        var record = TokenKeeperTests.record(.iap)
        record.authorizeURL = URL(
            string: "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/authorize")
        record.scopes = ["User.Read", "profile", "openid", "email"]
        record.requestedScopes = ["https://graph.microsoft.com/.default", "openid", "offline_access"]
        let client = ScriptedHTTPClient([ScriptedHTTPClient.tokens("access-2", refresh: "refresh-2")])
        _ = try await TokenKeeperTests.keeper(record, client).validCredential()
        let fields = SignOutFakes.fields(of: try #require(client.requests.first))
        #expect(fields["scope"] == "https://graph.microsoft.com/.default openid offline_access")
    }

    @Test("the scope of a refresh response replaces the stored grant")
    func refreshResponseScope() async throws {
        var record = TokenKeeperTests.record(.iap)
        record.scopes = ["openid", "profile"]
        let client = ScriptedHTTPClient([
            ScriptedHTTPClient.json(#"{"access_token":"access-2","expires_in":3600,"scope":"openid"}"#)
        ])
        let fresh = try await TokenKeeperTests.keeper(record, client).validCredential()
        #expect(fresh.scopes == ["openid"])
        record.requestedScopes = ["openid", "profile", "api.write"]
        #expect(
            StoredCredential(json: record.json)?.requestedScopes == ["openid", "profile", "api.write"],
            "the requested scopes survive the store")
        #expect(StoredCredential(json: record.json)?.scopes == ["openid", "profile"])
    }
}
