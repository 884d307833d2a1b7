import Foundation
import Testing
@testable import PortalAuth
import PortalAuthTesting
@testable import PortalAuthCore
@testable import PortalAuthTransport

/// The AADSTS errors people meet with Microsoft Entra ID, each with its named fix (issue 44; the codes of
/// MicrosoftDocs/entra-docs `reference-error-codes.md`), in Entra's error JSON: `error_description` starting with the
/// code and ending with a CRLF trailer (Trace ID, Correlation ID, Timestamp).
@Suite("Microsoft Entra AADSTS errors: the admin setting or the user action named")
struct EntraErrorAdviceTests {
    static let tokenURL = URL(string: "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/token")!

    /// Entra's `error_description` for `code`.
    static func description(_ code: Int, _ text: String) -> String {
        "AADSTS\(code): \(text)\r\nTrace ID: 0f6a1a4e-1b2c-4d3e-9f00-1234567890ab\r\nCorrelation ID: "
            + "5c1d2e3f-0000-4a4b-8c8d-abcdefabcdef\r\nTimestamp: 2026-11-29 01:00:00Z"
    }

    @Test(
        "each code's fix is named where the token endpoint's refusal is shown (sign-in, device code, refresh)",
        arguments: [
            (7_000_218, "invalid_client", "Allow public client flows"),
            (700_016, "unauthorized_client", "client_id"),
            (65001, "invalid_grant", "admin consent"),
            (50076, "invalid_grant", "IAPCredential.credential(for:settings:replacing:)"),
            (50079, "invalid_grant", "register"),
            (700_082, "invalid_grant", "IAPCredential.credential(for:settings:replacing:)"),
            (50173, "invalid_grant", "IAPCredential.credential(for:settings:replacing:)"),
            (53003, "invalid_grant", "Conditional Access"),
            (90002, "invalid_request", "authorize_url"),
        ])
    func tokenEndpoint(code: Int, error: String, named: String) {
        let refusal = TokenEndpointError(
            .refused, endpoint: Self.tokenURL, statusCode: 400, errorCode: error,
            errorDescription: Self.description(code, "The provider's own text <b>here</b>."))
        let shown = refusal.description
        #expect(shown.contains("AADSTS\(code)") && shown.contains(named), "\(shown)")
        #expect(!shown.contains("\r") && !shown.contains("\n"), "the CRLF trailer is folded")
        // A refused refresh says the same (status shows it too).
        let rejection = TokenKeeper.rejection(refusal)
        #expect(rejection.contains(named), "\(rejection)")
    }

    @Test("another provider's refusal keeps the generic advice")
    func otherProvider() {
        let shown = TokenEndpointError(
            .refused, endpoint: Self.tokenURL, statusCode: 400, errorCode: "invalid_client",
            errorDescription: "Client authentication failed"
        ).description
        #expect(shown.contains("Check the client ID"))
    }

    @Test("an error the browser brings back (AADSTS65001 consent) names its fix too")
    func redirectError() {
        let error = LoopbackError.identityProviderError(
            code: "consent_required",
            description: Self.description(65001, "The user or administrator has not consented."),
            uri: nil)
        #expect(error.description.contains("admin consent"), "\(error)")
    }

    @Test("AADSTS50011 on Entra's page for the authorize URL: refused before the browser opens, with the fix")
    func unregisteredRedirect() {
        let page = """
            <html><head><title>Sign in to your account</title></head><body><p>AADSTS50011: The redirect URI \
            'http://localhost:5555/callback' specified in the request does not match the redirect URIs configured for \
            the application.</p></body></html>
            """
        let response = TransportResponse(
            statusCode: 400, headers: [("Content-Type", "text/html")], body: Data(page.utf8),
            url: URL(string: "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/authorize")!)
        guard
            case .refused(let said) = AuthorizationRequestProbe.finding(
                in: response, redirectURI: URL(string: "http://localhost:5555/callback")!)
        else {
            Issue.record("not refused")
            return
        }
        #expect(said.contains("AADSTS50011") && said.contains("Mobile and desktop applications"), "\(said)")
        // The waiting message names it as well, for a page that only the browser sees.
        let waiting = IAPConfiguration.entraRedirectAdvice(
            authorizationURL: response.url, redirectURL: URL(string: "http://localhost:5555/callback")!)
        #expect(waiting?.contains("AADSTS50011") == true && waiting?.contains("http://localhost/callback") == true)
        #expect(
            IAPConfiguration.entraRedirectAdvice(
                authorizationURL: URL(string: "https://idp.example/authorize")!,
                redirectURL: URL(string: "http://localhost/callback")!) == nil)
    }

    @Test(
        "an unknown tenant (AADSTS90002 at its discovery document) stops the sign-in before the browser, naming authorize_url"
    )
    func unknownTenant() async throws {
        let http = ScriptedHTTPClient { _, request in
            TransportResponse(
                statusCode: 400, headers: [("Content-Type", "application/json")],
                body: Data(
                    JSONValue.object([
                        "error": .string("invalid_tenant"),
                        "error_description": .string(
                            Self.description(90002, "Tenant 'nowhere.onmicrosoft.com' not found.")),
                        "error_codes": .array([.integer(90002)]),
                    ]).serialized(indent: 0).utf8), url: request.url)
        }
        let error = await #expect(throws: DiscoveryError.self) {
            _ = try await IssuerDiscovery.issuer(
                forAuthorizeURL: URL(
                    string: "https://login.microsoftonline.com/nowhere.onmicrosoft.com/oauth2/v2.0/authorize")!,
                httpClient: http)
        }
        let shown = error?.description ?? ""
        #expect(shown.contains("AADSTS90002") && shown.contains("authorize_url") && !shown.contains("\r"), "\(shown)")
    }
}
