import Foundation
import Logging
import PortalAuthCore
import PortalAuthStore
import PortalAuthTransport

/// A look at the identity provider's answer to the authorization URL before the browser opens, so that a request it
/// rejects (an unregistered redirect URL or port, an unknown client ID, an invalid scope) is reported at once instead
/// of after the whole timeout.
///
/// It runs before the browser opens (a GET without side effects: no cookie, so a working request normally gets a
/// sign-in page or a redirect to one). Fatal, since the browser would get the same: a redirect to the loopback
/// redirect URL carrying `error`; an error status with an OAuth error about the request itself (`invalid_client`,
/// `invalid_request`, …); an endpoint nothing answers at (no such host, connection refused, TLS refused). A warning
/// only: an error status with some other page (the browser may still do better, for example where the provider
/// refuses non-browser clients). A 401 in JSON that is no OAuth refusal is an answer ("authenticate first", as
/// LemonLDAP::NG's portal tells clients that accept JSON), not a finding. A slow answer or other failures are not findings. Providers that ask for the
/// sign-in before they look at the client (Django OAuth Toolkit) cannot be checked this way.
struct AuthorizationRequestProbe: Sendable {
    /// What the look found.
    enum Finding: Sendable {
        /// Nothing wrong as far as can be seen without a browser.
        case nothing
        /// The provider redirected back with an `error`: the sign-in cannot succeed.
        case rejected(LoopbackError)
        /// The provider answered with an error page; what it said, cleaned for the terminal.
        case errorPage(String)
        /// The provider answered with an OAuth error that no browser gets past (an unknown client ID, a request it
        /// calls invalid); what it said, cleaned for the terminal.
        case refused(String)
        /// The authorization endpoint cannot be reached (no such host, nothing listening, TLS refused): the browser
        /// would show "This site can't be reached".
        case unreachable(TransportError)
    }

    /// OAuth errors (RFC 6749 §4.1.2.1, §5.2) a provider gives for the request itself, whoever sends it.
    private static let refusals: Set<String> = [
        "invalid_client", "unauthorized_client", "invalid_request", "invalid_scope", "unsupported_response_type",
    ]

    /// Transport failures that mean nothing answers at the endpoint (a slow answer is not one of them).
    private static let unreachableKinds: Set<TransportError.Kind> = [
        .cannotResolveHost, .cannotConnect, .connectionFailed, .tlsVerificationFailed, .tlsHandshakeFailed,
    ]

    /// Errors that only mean "there is no session in this request", which a request without cookies always gets
    /// with `prompt=none`.
    private static let sessionErrors: Set<String> = [
        "login_required", "interaction_required", "consent_required", "account_selection_required",
    ]

    /// The authorization URL (without any `id_token_hint`).
    var url: URL
    /// The redirect URI sent in it, with the listener's real port.
    var redirectURI: URL
    /// How long to wait for the answer before going on without it.
    var timeout: Duration = .seconds(10)

    /// Sends the request and reads the answer; never throws.
    func check(httpClient: any TransportClient, logger: Logger) async -> Finding {
        let request = TransportRequest.get(url)
        let response: TransportResponse
        do {
            response = try await withDeadline(
                timeout,
                onTimeout: {
                    TransportError(.timedOut, url: RedactedURL(url), detail: "no answer within \(timeout)")
                }
            ) {
                try await httpClient.send(request)
            }
        } catch is CancellationError {
            return .nothing
        } catch let error as TransportError where Self.unreachableKinds.contains(error.kind) {
            return .unreachable(error)
        } catch {
            logger.debug("authorization URL check skipped", metadata: ["error": "\(error)"])
            return .nothing
        }
        return Self.finding(in: response, redirectURI: redirectURI)
    }

    /// What an answer to the authorization URL says.
    static func finding(in response: TransportResponse, redirectURI: URL) -> Finding {
        let status = response.statusCode
        if (300..<400).contains(status) {
            guard let location = response.headers["Location"],
                let target = URL(string: location, relativeTo: response.url)?.absoluteURL,
                let query = URLComponents(url: target, resolvingAgainstBaseURL: false)?.queryItems,
                let code = query.first(where: { $0.name == "error" })?.value, !sessionErrors.contains(code)
            else { return .nothing }
            let description = query.first { $0.name == "error_description" }?.value
            if isSameEndpoint(target, redirectURI) {
                return .rejected(
                    .identityProviderError(
                        code: TokenEndpointError.clean(code, limit: 80),
                        description: description.map { TokenEndpointError.clean($0, limit: 300) },
                        uri: query.first { $0.name == "error_uri" }?.value.map {
                            TokenEndpointError.clean($0, limit: 200)
                        }))
            }
            return .errorPage(
                "it redirects to \(RedactedURL(target)) with error \(TokenEndpointError.clean(code, limit: 80))"
                    + (description.map { " (\(TokenEndpointError.clean($0, limit: 300)))" } ?? ""))
        }
        guard (400..<500).contains(status) else { return .nothing }
        var said = "it answers HTTP \(status)"
        let json = try? JSONValue.parse(response.body)
        // A 401 in JSON without an OAuth refusal is a sign-in page's answer to a client that asked for JSON (the
        // request's Accept): "authenticate first", as LemonLDAP::NG's portal says it. The browser gets the page.
        if status == 401, let json, !refusals.contains(json["error"]?.stringValue ?? "") { return .nothing }
        if let json, let code = json["error"]?.stringValue {
            if sessionErrors.contains(code) { return .nothing }
            said += " with error \(TokenEndpointError.clean(code, limit: 80))"
            if let description = json["error_description"]?.stringValue {
                said += " (\(TokenEndpointError.clean(description, limit: 300)))"
            }
            if refusals.contains(code) { return .refused(said) }
        } else if let entra = entraError(in: response) {
            // Microsoft Entra refuses a request it cannot serve (AADSTS50011, 700016, 90002 …) on an HTML page before
            // any sign-in, and shows it only in the browser (reference-error-codes.md): the browser would get the same.
            return .refused(said + " with \(entra.text)" + (entra.advice.map { ". " + $0 } ?? ""))
        } else if let title = title(of: response.body) {
            said += " with a page titled \"\(title)\""
        }
        return .errorPage(said)
    }

    /// The AADSTS error a Microsoft Entra error page states (`AADSTS50011: The redirect URI … does not match …`),
    /// cleaned and shortened, with its fix when the table knows one; nil for other pages and hosts.
    static func entraError(in response: TransportResponse) -> (text: String, advice: String?)? {
        guard EntraAuthority.isEntraHost(response.url) else { return nil }
        let text = String(decoding: response.body.prefix(512 * 1024), as: UTF8.self)
        guard let start = text.range(of: "AADSTS") else { return nil }
        let line = text[start.lowerBound...].prefix { !"<\"\\\r\n".contains($0) }
        guard let code = EntraErrorAdvice.code(in: String(line)) else { return nil }
        return (TokenEndpointError.clean(String(line), limit: 300), EntraErrorAdvice.advice(for: code))
    }

    /// Whether `url` is the redirect URI (scheme, host, port and path; the query is the provider's).
    private static func isSameEndpoint(_ url: URL, _ redirectURI: URL) -> Bool {
        url.scheme?.lowercased() == redirectURI.scheme?.lowercased()
            && url.host?.lowercased() == redirectURI.host?.lowercased()
            && url.port == redirectURI.port
            && (url.path.isEmpty ? "/" : url.path) == (redirectURI.path.isEmpty ? "/" : redirectURI.path)
    }

    /// An HTML page's title, cleaned for the terminal.
    private static func title(of body: Data) -> String? {
        let text = String(decoding: body.prefix(16 * 1024), as: UTF8.self)
        guard let open = text.range(of: "<title", options: .caseInsensitive),
            let start = text[open.upperBound...].firstIndex(of: ">"),
            let close = text.range(
                of: "</title>", options: .caseInsensitive, range: text.index(after: start)..<text.endIndex)
        else { return nil }
        let title = TokenEndpointError.clean(String(text[text.index(after: start)..<close.lowerBound]), limit: 80)
        return title.isEmpty ? nil : title
    }
}
