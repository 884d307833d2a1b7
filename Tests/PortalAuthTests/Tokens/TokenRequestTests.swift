import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthCore
@testable import PortalAuthStore
@testable import PortalAuthTransport
import PortalAuthTesting

/// `TokenRequest`: the form of each grant, field by field and in order; the client's authentication and the
/// `scope` and provider parameters; the request it posts; and no secret in what it says of itself.
@Suite("Token request")
struct TokenRequestTests {
    static let tokenURL = URL(string: "https://idp.example/oauth2/token?tenant=t")!

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let request: TokenRequest
        let fields: [String]
        /// The secrets the request carries (never in its description).
        let secrets: [String]
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "authorization_code with PKCE verifier",
            request: TokenRequest(
                tokenURL: tokenURL,
                grant: .authorizationCode(
                    code: "CODE-SECRET", redirectURI: "http://127.0.0.1:8080/callback", codeVerifier: "VERIFIER-SECRET"),
                clientID: "app"),
            fields: [
                "grant_type=authorization_code", "code=CODE-SECRET", "redirect_uri=http://127.0.0.1:8080/callback",
                "client_id=app",
                "code_verifier=VERIFIER-SECRET",
            ],
            secrets: ["CODE-SECRET", "VERIFIER-SECRET"]),
        Case(
            name: "refresh_token without scope",
            request: TokenRequest(tokenURL: tokenURL, grant: .refreshToken("REFRESH-SECRET"), clientID: "app"),
            fields: ["grant_type=refresh_token", "client_id=app", "refresh_token=REFRESH-SECRET"],
            secrets: ["REFRESH-SECRET"]),
        Case(
            name: "refresh_token with scope (Entra ID)",
            request: TokenRequest(
                tokenURL: tokenURL, grant: .refreshToken("REFRESH-SECRET"), clientID: "app",
                scope: "openid api://x/.default"),
            fields: [
                "grant_type=refresh_token", "client_id=app", "refresh_token=REFRESH-SECRET",
                "scope=openid api://x/.default",
            ],
            secrets: ["REFRESH-SECRET"]),
        Case(
            name: "ArcGIS exchange_refresh_token",
            request: TokenRequest(
                tokenURL: tokenURL,
                grant: .exchangeRefreshToken("REFRESH-SECRET", redirectURI: "urn:ietf:wg:oauth:2.0:oob"),
                clientID: "app"),
            fields: [
                "grant_type=exchange_refresh_token", "client_id=app", "refresh_token=REFRESH-SECRET",
                "redirect_uri=urn:ietf:wg:oauth:2.0:oob",
            ],
            secrets: ["REFRESH-SECRET"]),
        Case(
            name: "device_code",
            request: TokenRequest(tokenURL: tokenURL, grant: .deviceCode("DEVICE-SECRET"), clientID: "app"),
            fields: [
                "grant_type=urn:ietf:params:oauth:grant-type:device_code", "device_code=DEVICE-SECRET", "client_id=app",
            ],
            secrets: ["DEVICE-SECRET"]),
        Case(
            name: "client_credentials with the secret in the form and ArcGIS parameters",
            request: TokenRequest(
                tokenURL: tokenURL, grant: .clientCredentials, clientID: "app",
                authentication: .secretInForm("CLIENT-SECRET"),
                extraParameters: [("expiration", "120"), ("f", "json")]),
            fields: [
                "grant_type=client_credentials", "client_id=app", "client_secret=CLIENT-SECRET", "expiration=120",
                "f=json",
            ],
            secrets: ["CLIENT-SECRET"]),
    ]

    @Test("the form of each grant, in order", arguments: cases)
    func form(_ example: Case) {
        #expect(example.request.fields.map { "\($0.0)=\($0.1)" } == example.fields)
    }

    @Test("it posts the form, URL-encoded, to the token endpoint and asks for JSON", arguments: cases)
    func posts(_ example: Case) async throws {
        let client = ScriptedHTTPClient(body: #"{"access_token":"a","token_type":"Bearer","expires_in":60}"#)
        let response = try await example.request.send(with: client)
        #expect(response.statusCode == 200)
        let sent = try #require(client.requests.first)
        #expect(client.requests.count == 1)
        #expect(sent.method == .post)
        #expect(sent.url == Self.tokenURL)
        #expect(sent.headers["Content-Type"] == "application/x-www-form-urlencoded")
        #expect(sent.headers["Accept"] == "application/json")
        #expect(sent.body.map { String(decoding: $0, as: UTF8.self) } == FormEncoding.encode(example.request.fields))
    }

    @Test("its description, debug description and mirror name the grant and endpoint, never a secret", arguments: cases)
    func noSecrets(_ example: Case) {
        var dumped = ""
        dump(example.request, to: &dumped)
        let texts = [
            example.request.description, example.request.debugDescription, "\(example.request)",
            String(reflecting: example.request), dumped,
        ]
        for text in texts {
            #expect(text.contains(example.request.grant.type))
            #expect(!text.contains("tenant=t"), "the endpoint's query is left out: \(text)")
            for secret in example.secrets { #expect(!text.contains(secret), "\(text)") }
        }
    }
}
