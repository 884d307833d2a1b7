import Foundation
import Synchronization
import Testing
@testable import PortalAuth
import PortalAuthTesting
@testable import PortalAuthCore
@testable import PortalAuthTransport

/// UserInfo at sign-in (OIDC Core §5.3; rp-userinfo-bearer-header, rp-scope-userinfo-claims,
/// rp-userinfo-bad-sub-claim): asked with the access token in the Authorization header when discovery names the
/// endpoint; its name and e-mail address are stored; a `sub` that is not the ID token's fails the sign-in; an endpoint
/// that cannot be read is reported and the sign-in goes on.
@Suite("UserInfo at sign-in")
struct UserInfoTests {
    static let userinfoURL = URL(string: "https://idp.example/oauth2/userinfo")!

    /// Records the warnings a sign-in reports.
    final class WarningObserver: SignInObserver {
        private let recorded = Mutex<[String]>([])
        var warnings: [String] { recorded.withLock { $0 } }
        func configurationWarning(_ message: String) { recorded.withLock { $0.append(message) } }
    }

    /// The sign-in provider of `IAPSignInConformanceTests`, with a discovery document naming `userinfo_endpoint`,
    /// whose answer is `userinfo`.
    static func provider(userinfo: @escaping @Sendable () -> TransportResponse) -> (
        ScriptedHTTPClient, SignOutFakes.Browser
    ) {
        let box = NonceBox()
        let http = ScriptedHTTPClient { _, request in
            func json(_ object: JSONObject) -> TransportResponse {
                TransportResponse(
                    statusCode: 200, headers: [("Content-Type", "application/json")],
                    body: Data(JSONValue.object(object).serialized(indent: 0).utf8), url: request.url)
            }
            switch request.url.absoluteString {
            case "https://idp.example/oauth2/.well-known/openid-configuration":
                return json([
                    "issuer": .string("https://idp.example/oauth2"),
                    "authorization_endpoint": .string(IAPSignInConformanceTests.authorizeURL.absoluteString),
                    "token_endpoint": .string(IAPSignInConformanceTests.tokenURL.absoluteString),
                    "userinfo_endpoint": .string(userinfoURL.absoluteString),
                    "id_token_signing_alg_values_supported": IDTokenTests.signsWithNone,
                ])
            case userinfoURL.absoluteString:
                return userinfo()
            case IAPSignInConformanceTests.tokenURL.absoluteString:
                return json([
                    "access_token": .string("ACCESS-1"), "token_type": .string("Bearer"), "expires_in": .integer(3600),
                    "id_token": .string(IAPSignInConformanceTests.idToken(nonce: box.nonce.withLock { $0 })),
                ])
            default:
                return TransportResponse(
                    statusCode: 200, headers: [("Content-Type", "text/html")],
                    body: Data("<title>Sign in</title>".utf8), url: request.url)
            }
        }
        let browser = SignOutFakes.Browser { url in
            let query = SignOutFakes.query(of: url)
            box.nonce.withLock { $0 = query["nonce"] }
            guard let redirect = query["redirect_uri"], let state = query["state"],
                let back = URL(string: "\(redirect)?code=CODE-1&state=\(state)")
            else { return }
            _ = try? await CurlHTTPClient().send(.get(back))
        }
        return (http, browser)
    }

    /// The nonce the browser saw, for the token endpoint's ID token.
    final class NonceBox: Sendable {
        let nonce = Mutex<String?>(nil)
    }

    static func answer(_ object: JSONObject, status: Int = 200) -> TransportResponse {
        TransportResponse(
            statusCode: status, headers: [("Content-Type", "application/json")],
            body: Data(JSONValue.object(object).serialized(indent: 0).utf8), url: userinfoURL)
    }

    static func signIn(
        _ http: ScriptedHTTPClient, _ browser: SignOutFakes.Browser,
        observer: any SignInObserver = SilentSignInObserver()
    ) async throws -> IAPCredential {
        try await IAPCredential.credential(
            for: IAPSignInConformanceTests.configuration(),
            settings: SignInSettings(
                browser: browser, timeout: .seconds(60), observer: observer, httpClient: http,
                environment: SignInEnvironment(hasDisplay: true, isSSHSession: false, hasForwardedDisplay: false)))
    }

    @Test("the access token goes in the Authorization header; the name and e-mail address are stored and summarised")
    func bearerHeaderAndClaims() async throws {
        let (http, browser) = Self.provider {
            Self.answer(["sub": .string("42"), "name": .string("Alice Liddell"), "email": .string("alice@example.org")])
        }
        let credential = try await Self.signIn(http, browser)
        let asked = try #require(http.requests.first { $0.url == Self.userinfoURL })
        #expect(asked.headers["Authorization"] == "Bearer ACCESS-1")
        #expect(asked.method == .get && asked.body == nil, "the token is not sent in a body or the URL")
        #expect(!asked.url.absoluteString.contains("ACCESS-1"))
        #expect(credential.keeper.current.userInfoName == "Alice Liddell")
        #expect(credential.keeper.current.userInfoEmail == "alice@example.org")
        let summary = CredentialSummary(credential.keeper.current)
        #expect(summary.userInfoName == "Alice Liddell" && summary.userInfoEmail == "alice@example.org")
        // Kept through the store's JSON.
        let reread = try #require(StoredCredential(json: credential.keeper.current.json))
        #expect(reread.userInfoEmail == "alice@example.org")
    }

    @Test("a UserInfo sub that is not the ID token's fails the sign-in (rp-userinfo-bad-sub-claim)")
    func badSubject() async throws {
        let (http, browser) = Self.provider { Self.answer(["sub": .string("43"), "name": .string("Mallory")]) }
        let error = await #expect(throws: UserInfoError.self) { _ = try await Self.signIn(http, browser) }
        #expect(error?.isSubjectMismatch == true)
        #expect(error?.description.contains("43") == true, "\(String(describing: error))")
    }

    @Test("an endpoint that fails is reported and the sign-in goes on", arguments: [500, 401])
    func failingEndpoint(status: Int) async throws {
        let (http, browser) = Self.provider { Self.answer(["error": .string("server_error")], status: status) }
        let observer = WarningObserver()
        let credential = try await Self.signIn(http, browser, observer: observer)
        #expect(credential.keeper.current.userInfoName == nil)
        #expect(
            observer.warnings.contains { $0.contains("UserInfo") && $0.contains("HTTP \(status)") },
            "\(observer.warnings)")
    }
}
