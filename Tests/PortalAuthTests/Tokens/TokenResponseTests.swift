import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthCore
@testable import PortalAuthStore
@testable import PortalAuthTransport

/// One response a token endpoint might send.
struct TokenCase: CustomTestStringConvertible, Sendable {
    let name: String
    let status: Int
    let contentType: String?
    let body: String
    var headers: [(String, String)] = []

    var testDescription: String { name }

    var response: TransportResponse {
        var fields = headers.map { (name: $0.0, value: $0.1) }
        if let contentType { fields.insert((name: "Content-Type", value: contentType), at: 0) }
        return TransportResponse(
            statusCode: status, headers: TransportHeaders(fields), body: Data(body.utf8),
            url: TokenResponseTests.endpoint)
    }
}

/// What a refused or failed case must report.
struct ExpectedFailure: Sendable {
    let kind: TokenEndpointError.Kind
    let category: ErrorCategory
    var errorCode: String?
    var arcGISCode: Int?
    var invalidGrant = false
    var requiresSignIn = false
    /// Texts the message must contain.
    var mentions: [String] = []
}

@Suite("Token endpoint responses")
struct TokenResponseTests {
    static let endpoint = URL(string: "https://portal.example.com/sharing/rest/oauth2/token?client_secret=QUERYSECRET")!

    // MARK: - Successes

    @Test("ArcGIS success: username, ssl, refresh token and its lifetime; Bearer by default")
    func arcGISSuccess() throws {
        let body =
            #"{"access_token":"AT-1","expires_in":1800,"username":"alice","ssl":true,"refresh_token":"RT-1","refresh_token_expires_in":1209599}"#
        let tokens = try TokenResponse.parse(
            TokenCase(name: "", status: 200, contentType: "application/json", body: body).response,
            endpoint: Self.endpoint)
        #expect(
            tokens
                == TokenResponse(
                    accessToken: "AT-1", tokenType: "Bearer", expiresIn: .seconds(1800), refreshToken: "RT-1",
                    refreshTokenExpiresIn: .seconds(1_209_599), username: "alice", isSSLRequired: true))
        #expect(!tokens.description.contains("AT-1"))
        #expect(!tokens.description.contains("RT-1"))
    }

    @Test("OpenID Connect success: token type, scopes, ID token")
    func oidcSuccess() throws {
        let body =
            #"{"token_type":"Bearer","scope":"openid profile offline_access","expires_in":3599,"access_token":"eyJ.a.b","refresh_token":"0.AX","id_token":"eyJ.c.d"}"#
        let tokens = try TokenResponse.parse(
            TokenCase(name: "", status: 200, contentType: "application/json; charset=utf-8", body: body).response,
            endpoint: Self.endpoint)
        #expect(tokens.tokenType == "Bearer")
        #expect(tokens.scopes == ["openid", "profile", "offline_access"])
        #expect(tokens.idToken == "eyJ.c.d")
        #expect(tokens.expiresIn == .seconds(3599))
        #expect(tokens.username == nil)
        #expect(tokens.isSSLRequired == nil)
    }

    @Test("expires_in as a numeric string, text/plain as older ArcGIS servers send, scope as an array")
    func stringExpiresIn() throws {
        let body =
            #"{"access_token":"AT","expires_in":"7200","refresh_token_expires_in":"86400.5","ssl":"false","scope":["a","b"]}"#
        let tokens = try TokenResponse.parse(
            TokenCase(name: "", status: 200, contentType: "text/plain;charset=utf-8", body: body).response,
            endpoint: Self.endpoint)
        #expect(tokens.expiresIn == .seconds(7200))
        #expect(tokens.refreshTokenExpiresIn == .milliseconds(86_400_500))
        #expect(tokens.isSSLRequired == false)
        #expect(tokens.scopes == ["a", "b"])
    }

    // MARK: - Refusals and failures

    static let failures: [(TokenCase, ExpectedFailure)] = [
        (
            TokenCase(
                name: "ArcGIS envelope 498 with invalid_grant, HTTP 200", status: 200, contentType: "application/json",
                body:
                    #"{"error":{"code":498,"message":"Invalid token.","details":[],"error":"invalid_grant","error_description":"Invalid refresh_token"}}"#
            ),
            ExpectedFailure(
                kind: .refused, category: .refused, errorCode: "invalid_grant", arcGISCode: 498,
                invalidGrant: true, requiresSignIn: true,
                mentions: ["invalid_grant", "498", "Invalid token.", "sign in again"])
        ),
        (
            TokenCase(
                name: "ArcGIS envelope 498 alone", status: 200, contentType: "text/plain",
                body: #"{"error":{"code":498,"message":"Invalid token.","details":[]}}"#),
            ExpectedFailure(
                kind: .refused, category: .refused, arcGISCode: 498, requiresSignIn: true,
                mentions: ["ArcGIS error 498"])
        ),
        (
            TokenCase(
                name: "ArcGIS envelope 400, refresh_token expired", status: 200, contentType: "application/json",
                body:
                    #"{"error":{"code":400,"error":"invalid_request","error_description":"refresh_token expired","message":"refresh_token expired","details":[]}}"#
            ),
            ExpectedFailure(
                kind: .refused, category: .refused, errorCode: "invalid_request", arcGISCode: 400, requiresSignIn: true)
        ),
        (
            TokenCase(
                name: "ArcGIS envelope 400 Unable to generate token", status: 200, contentType: "application/json",
                body:
                    #"{"error":{"code":400,"message":"Unable to generate token.","details":["Invalid username or password."]}}"#
            ),
            ExpectedFailure(
                kind: .refused, category: .refused, arcGISCode: 400, mentions: ["Unable to generate token."])
        ),
        (
            TokenCase(
                name: "400 invalid_grant (Entra)", status: 400, contentType: "application/json; charset=utf-8",
                body:
                    #"{"error":"invalid_grant","error_description":"AADSTS70008: The provided authorization code or refresh token has expired due to inactivity.","error_codes":[70008]}"#
            ),
            ExpectedFailure(
                kind: .refused, category: .refused, errorCode: "invalid_grant", invalidGrant: true,
                requiresSignIn: true,
                mentions: ["invalid_grant", "AADSTS70008"])
        ),
        (
            TokenCase(
                name: "401 invalid_client", status: 401, contentType: "application/json",
                body:
                    #"{"error":"invalid_client","error_description":"Client authentication failed.","error_uri":"https://idp.example/docs/errors"}"#
            ),
            ExpectedFailure(
                kind: .refused, category: .refused, errorCode: "invalid_client",
                mentions: [
                    "invalid_client", "Client authentication failed.", "client ID", "https://idp.example/docs/errors",
                ])
        ),
        (
            TokenCase(
                name: "400 interaction_required", status: 400, contentType: "application/json",
                body: #"{"error":"interaction_required"}"#),
            ExpectedFailure(kind: .refused, category: .refused, errorCode: "interaction_required", requiresSignIn: true)
        ),
        // Glewlwyd answers a rotated-out refresh token with HTTP 400 and an empty body (issue 11, item 5).
        (
            TokenCase(
                name: "400 with an empty body (Glewlwyd, rotated-out refresh token)", status: 400, contentType: nil,
                body: ""),
            ExpectedFailure(
                kind: .refused, category: .refused, requiresSignIn: true,
                mentions: ["HTTP 400", "empty body", "sign in again"])
        ),
        (
            TokenCase(
                name: "400 with an HTML page", status: 400, contentType: "text/html",
                body: "<html><head><title>Bad Request</title></head><body>refresh_token=SECRETTOKEN</body></html>"),
            ExpectedFailure(
                kind: .refused, category: .refused, requiresSignIn: true, mentions: ["HTTP 400", "\"Bad Request\""])
        ),
        (
            TokenCase(name: "401 with an empty body", status: 401, contentType: "text/plain", body: ""),
            ExpectedFailure(kind: .refused, category: .refused, requiresSignIn: true, mentions: ["HTTP 401"])
        ),
        (
            TokenCase(
                name: "HTML 502 page", status: 502, contentType: "text/html",
                body: "<html><head><TITLE>502 Bad Gateway</TITLE></head><body>upstream token=SECRETTOKEN</body></html>"),
            ExpectedFailure(
                kind: .serverFailure, category: .unavailable,
                mentions: ["HTTP 502", "\"502 Bad Gateway\"", "try again later"])
        ),
        (
            TokenCase(
                name: "500 server_error JSON", status: 500, contentType: "application/json",
                body: #"{"error":"server_error"}"#),
            ExpectedFailure(kind: .serverFailure, category: .unavailable, errorCode: "server_error")
        ),
        (
            TokenCase(
                name: "200 temporarily_unavailable", status: 200, contentType: "application/json",
                body: #"{"error":"temporarily_unavailable"}"#),
            ExpectedFailure(kind: .serverFailure, category: .unavailable, errorCode: "temporarily_unavailable")
        ),
        (
            TokenCase(name: "503 with an empty body", status: 503, contentType: nil, body: ""),
            ExpectedFailure(kind: .serverFailure, category: .unavailable, mentions: ["empty body"])
        ),
        (
            TokenCase(
                name: "truncated JSON holding a token", status: 200, contentType: "application/json",
                body: #"{"access_token":"SECRETTOKEN","expires_in":36"#),
            ExpectedFailure(kind: .invalidResponse, category: .unavailable, mentions: ["not valid JSON", "line 1"])
        ),
        (
            TokenCase(
                name: "missing access_token", status: 200, contentType: "application/json",
                body: #"{"token_type":"Bearer","expires_in":3600,"refresh_token":"SECRETTOKEN"}"#),
            ExpectedFailure(kind: .invalidResponse, category: .unavailable, mentions: ["no access_token"])
        ),
        (
            TokenCase(
                name: "empty access_token", status: 200, contentType: "application/json", body: #"{"access_token":""}"#),
            ExpectedFailure(kind: .invalidResponse, category: .unavailable, mentions: ["no access_token"])
        ),
        (
            TokenCase(
                name: "HTML sign-in page with HTTP 200", status: 200, contentType: "text/html; charset=utf-8",
                body: "<!doctype html><html><head><title>Sign in</title></head></html>"),
            ExpectedFailure(kind: .invalidResponse, category: .unavailable, mentions: ["text/html", "\"Sign in\""])
        ),
        (
            TokenCase(name: "a JSON array", status: 200, contentType: "application/json", body: "[]"),
            ExpectedFailure(kind: .invalidResponse, category: .unavailable, mentions: ["array"])
        ),
        (
            TokenCase(
                name: "expires_in of the wrong type", status: 200, contentType: "application/json",
                body: #"{"access_token":"SECRETTOKEN","expires_in":true}"#),
            ExpectedFailure(kind: .invalidResponse, category: .unavailable, mentions: ["expires_in"])
        ),
        (
            TokenCase(
                name: "negative expires_in", status: 200, contentType: "application/json",
                body: #"{"access_token":"SECRETTOKEN","expires_in":"-5"}"#),
            ExpectedFailure(kind: .invalidResponse, category: .unavailable, mentions: ["expires_in"])
        ),
        (
            TokenCase(
                name: "a redirect", status: 302, contentType: "text/html", body: "",
                headers: [("Location", "https://login.example.com/sso?SAMLRequest=SECRETTOKEN")]),
            ExpectedFailure(
                kind: .unexpectedStatus, category: .unavailable,
                mentions: ["HTTP 302", "https://login.example.com/sso"])
        ),
        (
            TokenCase(
                name: "a bare 404", status: 404, contentType: "application/json", body: #"{"message":"not found"}"#),
            ExpectedFailure(kind: .unexpectedStatus, category: .unavailable, mentions: ["HTTP 404"])
        ),
    ]

    @Test("refusals and failures are typed, named, and never echo tokens", arguments: failures)
    func failure(_ tokenCase: TokenCase, _ expected: ExpectedFailure) {
        do {
            let tokens = try TokenResponse.parse(tokenCase.response, endpoint: Self.endpoint)
            Issue.record("parsed as tokens: \(tokens)")
        } catch {
            #expect(error.kind == expected.kind)
            #expect(error.category == expected.category)
            #expect(error.statusCode == tokenCase.status)
            #expect(error.errorCode == expected.errorCode)
            #expect(error.arcGISCode == expected.arcGISCode)
            #expect(error.isInvalidGrant == expected.invalidGrant)
            #expect(error.requiresSignIn == expected.requiresSignIn)
            let message = error.description
            #expect(message.contains("https://portal.example.com/sharing/rest/oauth2/token"))
            #expect(!message.contains("QUERYSECRET"))
            #expect(!message.contains("SECRETTOKEN"))
            for text in expected.mentions {
                #expect(message.localizedCaseInsensitiveContains(text), "\(message) should mention \(text)")
            }
        }
    }

    @Test("provider texts lose control characters and are shortened")
    func cleansProviderText() throws {
        let description = "bad\u{1B}[31m red\r\nline" + String(repeating: "x", count: 400)
        let body = try #require(
            String(
                data: try JSONSerialization.data(withJSONObject: [
                    "error": "invalid_request", "error_description": description,
                ]), encoding: .utf8))
        let response = TokenCase(name: "", status: 400, contentType: "application/json", body: body).response
        #expect(throws: TokenEndpointError.self) { try TokenResponse.parse(response, endpoint: Self.endpoint) }
        do {
            _ = try TokenResponse.parse(response, endpoint: Self.endpoint)
        } catch {
            let text = try #require(error.errorDescription)
            #expect(!text.unicodeScalars.contains { $0.properties.generalCategory == .control })
            #expect(text.hasPrefix("bad\\u{1B}[31m red line"))
            #expect(text.count <= 301)
        }
    }

    @Test("the ArcGIS envelope is recognised on its own, for any request")
    func envelope() {
        let envelope = ArcGISErrorEnvelope(
            body: Data(#"{"error":{"code":499,"message":"Token Required","details":[]}}"#.utf8))
        #expect(envelope == ArcGISErrorEnvelope(code: 499, message: "Token Required"))
        #expect(envelope?.isTokenChallenge == true)
        #expect(ArcGISErrorEnvelope(body: Data(#"{"error":"invalid_grant"}"#.utf8)) == nil)
        #expect(ArcGISErrorEnvelope(body: Data("not json".utf8)) == nil)
    }
}
