import Foundation
import PortalAuthCore

/// The parameters of one authorization-code request with PKCE, and the URL the browser opens.
///
/// Holds secrets (the PKCE verifier, state and nonce): it is never printed or logged.
struct AuthorizationRequest: Sendable {
    /// The client.
    let clientID: String
    /// The `redirect_uri` as sent (with the listener's real port).
    let redirectURI: String
    /// The PKCE pair; the verifier stays here and goes only to the token endpoint.
    let pkce: PKCE
    /// High-entropy anti-CSRF value.
    let state: String
    /// Replay protection for the ID token; sent when `openid` is among the scopes.
    let nonce: String?

    /// A request with fresh random values.
    init(clientID: String, redirectURI: String, wantsNonce: Bool) throws(CryptoError) {
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.pkce = try PKCE.generate()
        self.state = try SecureRandom.token()
        self.nonce = wantsNonce ? try SecureRandom.token() : nil
    }

    /// The authorization URL: `endpoint` with the standard parameters and `extra` ones appended
    /// to whatever query the endpoint already has.
    func url(endpoint: URL, extra: [(String, String)]) -> URL {
        var items: [(String, String)] = [
            ("client_id", clientID),
            ("response_type", "code"),
            ("redirect_uri", redirectURI),
            ("state", state),
            ("code_challenge", pkce.challenge),
            ("code_challenge_method", pkce.method),
        ]
        if let nonce { items.append(("nonce", nonce)) }
        items += extra
        return URLQuery.appending(items, to: endpoint)
    }

    /// The token request for the received `code` at `tokenURL` (RFC 6749 §4.1.3 with RFC 7636's verifier).
    func tokenRequest(code: String, tokenURL: URL) -> TokenRequest {
        TokenRequest(
            tokenURL: tokenURL,
            grant: .authorizationCode(code: code, redirectURI: redirectURI, codeVerifier: pkce.verifier),
            clientID: clientID)
    }
}

/// Query-string building with strict percent-encoding of values.
enum URLQuery {
    /// Characters left as they are in a query component (RFC 3986 unreserved).
    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// Percent-encodes everything but unreserved characters.
    static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    /// `url` with `items` appended to its query.
    static func appending(_ items: [(String, String)], to url: URL) -> URL {
        let encoded = items.map { "\(encode($0.0))=\(encode($0.1))" }.joined(separator: "&")
        var text = url.absoluteString
        if let hash = text.firstIndex(of: "#") { text = String(text[..<hash]) }
        let separator = text.contains("?") ? (text.hasSuffix("?") || text.hasSuffix("&") ? "" : "&") : "?"
        return URL(string: text + separator + encoded) ?? url
    }
}
