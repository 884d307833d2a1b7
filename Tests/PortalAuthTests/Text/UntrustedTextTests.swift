import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthStore
@testable import PortalAuthTransport

/// Text from servers, redirects and files never brings control characters to the terminal, and tokens or user names
/// that carry them are refused where they enter (issue 12, items 4 and 5).
@Suite("Untrusted text and tokens")
struct UntrustedTextTests {
    private static let endpoint = URL(string: "https://idp.example/oauth2/token")!
    /// ESC sequences (clear screen, set title), BEL, CR, LF: what a hostile server would send.
    private static let hostile = "ok\u{1B}[2J\u{1B}]0;pwned\u{07}\r\nportal-auth: signed in as admin"

    private static func hasControl(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    private static func tokenResponse(_ body: [String: Any]) throws -> TransportResponse {
        TransportResponse(
            statusCode: 200, headers: TransportHeaders([(name: "Content-Type", value: "application/json")]),
            body: try JSONSerialization.data(withJSONObject: body), url: endpoint)
    }

    // MARK: - Shown text

    @Test("the redirect's error and error_description reach the message without control characters")
    func redirectError() throws {
        let listener = try LoopbackListener(redirectURL: URL(string: "http://127.0.0.1/callback")!)
        defer { listener.close() }
        let description = Self.hostile.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let pasted =
            "\(listener.redirectURL.absoluteString)?state=s-1&error=access_denied%1B%5B31m&error_description=\(description)"
        do {
            _ = try listener.callback(fromPastedURL: pasted, state: "s-1")
            Issue.record("an error response must be refused")
        } catch {
            #expect(!Self.hasControl(error.description), "\(error.description.debugDescription)")
            #expect(error.description.contains("pwned"), "the text is shown, only neutralised")
        }
    }

    @Test("a WWW-Authenticate or ArcGIS error text from a resource server is shown without control characters")
    func challengeText() {
        let error = AuthenticationChallengeError(
            .httpAuthentication, url: URL(string: "https://gis.example.com/x")!, statusCode: 401, detail: Self.hostile)
        #expect(!Self.hasControl(error.description))
        #expect(!Self.hasControl(error.detail))
    }

    @Test("key names and values of an IAP file are reported without control characters")
    func configurationText() throws {
        let text =
            #"{"authorize_url": "https://idp.example/a", "token_url": "https://idp.example/t", "logout_url": "https://idp.example/l", "client_id": "abc", "redirect_url": "http://127.0.0.1/cb", "scope": ["openid"], "hosts_behind_proxy": ["maps.contoso.com"], "evil\u001b[2J\u0007key": 1, "authorization_prompt_type": "bad\u001b]0;title\u0007"}"#
        let report = IAPConfiguration.report(parsing: Data(text.utf8), file: URL(fileURLWithPath: "/tmp/iap.json"))
        let messages = (report.errors + report.warnings).map(\.message)
        #expect(!messages.isEmpty)
        for message in messages {
            #expect(!Self.hasControl(message), "\(message.debugDescription)")
        }
        #expect(messages.contains { $0.contains("evil") })
    }

    @Test("an ArcGIS error message from a token service is shown without control characters")
    func arcGISMessage() throws {
        let response = TransportResponse(
            statusCode: 200, headers: TransportHeaders([(name: "Content-Type", value: "application/json")]),
            body: try JSONSerialization.data(withJSONObject: ["error": ["code": 400, "message": Self.hostile]]),
            url: Self.endpoint)
        do {
            _ = try TokenService.tokenInfo(
                from: response, endpoint: Self.endpoint, principal: "alice", secret: "password",
                defaultLifetime: .seconds(60), now: Date())
            Issue.record("an error envelope must be refused")
        } catch {
            #expect(!Self.hasControl("\(error)"), "\(String(describing: error).debugDescription)")
        }
    }

    // MARK: - Refused on entry

    @Test(
        "a token response whose access or refresh token holds CR LF is refused, naming the field",
        arguments: [
            "access_token", "refresh_token",
        ])
    func tokenWithLineBreak(field: String) throws {
        var body: [String: Any] = ["access_token": "AT-1", "refresh_token": "RT-1", "expires_in": 60]
        body[field] = "abc\r\nX-Injected: 1"
        let response = try Self.tokenResponse(body)
        do {
            _ = try TokenResponse.parse(response, endpoint: Self.endpoint)
            Issue.record("a token with CR LF must be refused")
        } catch {
            #expect(error.kind == .invalidResponse)
            #expect(error.description.contains(field))
            #expect(!error.description.contains("X-Injected"), "the token itself is never repeated")
        }
    }

    @Test("a user name with control characters is refused where it enters")
    func userNameWithControls() throws {
        let body: [String: Any] = ["access_token": "AT-1", "expires_in": 60, "username": "ali\u{1B}[2Jce"]
        #expect(throws: TokenEndpointError.self) {
            try TokenResponse.parse(try Self.tokenResponse(body), endpoint: Self.endpoint)
        }
        let fine: [String: Any] = ["access_token": "AT-1", "expires_in": 60, "username": "Zoë Müller@contoso"]
        #expect(
            try TokenResponse.parse(try Self.tokenResponse(fine), endpoint: Self.endpoint).username
                == "Zoë Müller@contoso")
    }

    @Test("a generateToken token with CR LF is refused")
    func generatedTokenWithLineBreak() throws {
        let response = TransportResponse(
            statusCode: 200, headers: TransportHeaders([(name: "Content-Type", value: "application/json")]),
            body: try JSONSerialization.data(withJSONObject: [
                "token": "abc\r\nX-Injected: 1", "expires": 4_102_444_800_000,
            ]), url: Self.endpoint)
        #expect(throws: TokenEndpointError.self) {
            try TokenService.tokenInfo(
                from: response, endpoint: Self.endpoint, principal: "alice", secret: "password",
                defaultLifetime: .seconds(60), now: Date())
        }
    }
}
