import Foundation
import Synchronization
@testable import PortalAuth
import PortalAuthTesting
@testable import PortalAuthCore
@testable import PortalAuthStore
@testable import PortalAuthTransport

/// An OpenID provider at `https://idp.example/o` for remote sign-in tests: discovery (with or without a device
/// authorization endpoint), the device authorization endpoint, and a token endpoint whose device-code polls are
/// answered from a script (then tokens with an ID token). Other token requests (a code exchange) get tokens too.
struct FakeIdentityProvider: Sendable {
    static let issuer = "https://idp.example/o"
    static let authorizeURL = URL(string: "https://idp.example/o/authorize/")!
    static let tokenURL = URL(string: "https://idp.example/o/token/")!
    static let deviceURL = URL(string: "https://idp.example/o/device-authorization/")!
    static let clientID = "portal-auth-test"
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// Whether discovery names the device authorization endpoint.
    var offersDeviceCode = true
    /// The device authorization answer's `interval` and `expires_in`.
    var interval = 5
    var expiresIn = 600
    /// The `error` of each device-code poll before tokens are given (`authorization_pending`, `slow_down`, …).
    var pollErrors: [String] = []
    /// The ID token's `aud`.
    var audience = FakeIdentityProvider.clientID
    /// The ID token's `iat`: the sign-in's clock (a device-code test's virtual clock); nil: now.
    var issuedAt: Date? = nil

    /// The configuration of an IAP signed in through this provider.
    static func configuration() throws -> IAPConfiguration {
        try IAPConfiguration.configuration(
            authorizeURL: authorizeURL, tokenURL: tokenURL, logoutURL: URL(string: "https://idp.example/o/logout/")!,
            clientID: clientID, redirectURL: URL(string: "http://127.0.0.1/callback")!,
            scopes: ["openid", "profile", "offline_access"], hostsBehindProxy: ["app.example"])
    }

    /// The nonce the ID token carries (an authorization-code sign-in's, seen by the test in the authorization URL);
    /// none when nil or empty (the device code has none).
    var nonce: NonceBox? = nil

    /// A nonce handed from the test's observer to the token endpoint.
    final class NonceBox: Sendable {
        private let value = Mutex<String?>(nil)
        func set(_ nonce: String?) { value.withLock { $0 = nonce } }
        var current: String? { value.withLock { $0 } }
    }

    /// The HTTP client answering as this provider.
    func client() -> ScriptedHTTPClient {
        let provider = self
        let polls = Mutex(0)
        return ScriptedHTTPClient { _, request in
            func json(_ value: JSONValue, status: Int = 200) -> TransportResponse {
                TransportResponse(
                    statusCode: status, headers: [("Content-Type", "application/json")],
                    body: Data(value.serialized(indent: 0).utf8), url: request.url)
            }
            switch request.url.absoluteString {
            case "https://idp.example/o/.well-known/openid-configuration":
                var document: JSONObject = [
                    "issuer": .string(Self.issuer), "authorization_endpoint": .string(Self.authorizeURL.absoluteString),
                    "token_endpoint": .string(Self.tokenURL.absoluteString),
                    "id_token_signing_alg_values_supported": IDTokenTests.signsWithNone,
                ]
                if provider.offersDeviceCode {
                    document["device_authorization_endpoint"] = .string(Self.deviceURL.absoluteString)
                }
                return json(.object(document))
            case Self.deviceURL.absoluteString:
                return json(
                    .object([
                        "device_code": .string("device-secret-123"), "user_code": .string("WDJB-MJHT"),
                        "verification_uri": .string("https://idp.example/o/device/"),
                        "verification_uri_complete": .string("https://idp.example/o/device/?user_code=WDJB-MJHT"),
                        "expires_in": .integer(Int64(provider.expiresIn)),
                        "interval": .integer(Int64(provider.interval)),
                    ]))
            case Self.tokenURL.absoluteString:
                let index = polls.withLock { count in
                    defer { count += 1 }
                    return count
                }
                if index < provider.pollErrors.count {
                    return json(.object(["error": .string(provider.pollErrors[index])]), status: 400)
                }
                return json(
                    .object([
                        "access_token": .string("access-1"), "refresh_token": .string("refresh-1"),
                        "expires_in": .integer(3600),
                        "token_type": .string("Bearer"),
                        "id_token": .string(
                            IDTokenTests.token(
                                IDTokenTests.payload(
                                    aud: .string(provider.audience), nonce: provider.nonce?.current, exp: 1_800_003_600,
                                    iss: Self.issuer,
                                    iat: (provider.issuedAt ?? Date()).timeIntervalSince1970))),
                    ]))
            default:
                return json(.object(["error": .string("not_found")]), status: 404)
            }
        }
    }
}
