import Foundation

/// What a response asks for, as `AuthenticationManager.data(for:)` reads it: the challenge to answer, or none.
enum DetectedChallenge: Sendable, Equatable {
    /// ArcGIS error 498 or 499 in the error document (usually inside HTTP 200).
    case arcGISToken(code: Int, message: String)
    /// An Identity-Aware Proxy wants a sign-in: a 401 with a `Bearer` challenge or from a host behind a known
    /// proxy, or a redirect from such a host to its identity provider.
    case identityAwareProxy(detail: String)
    /// HTTP authentication: the password schemes offered, in the server's order, with their realms.
    case http([Scheme])

    /// One password scheme a server offered.
    struct Scheme: Sendable, Equatable {
        let kind: NetworkAuthenticationChallenge.Kind
        let realm: String?
    }

    /// The challenge in `response` to a request for `url`, or nil when it is an ordinary answer.
    ///
    /// - Parameter iapConfigurations: the IAP configurations known (stored credentials', the authenticator's):
    ///   a host they cover that answers 401, or redirects to their identity provider, is behind a proxy.
    static func detect(in response: TransportResponse, for url: URL, iapConfigurations: [IAPConfiguration]) -> DetectedChallenge? {
        let covering = iapConfigurations.filter { $0.canBeUsed(for: url) }
        if response.statusCode == 401 || response.statusCode == 403 {
            let offered = WWWAuthenticateChallenge.parse(response.headers.values(for: "WWW-Authenticate"))
            let schemes = offered.compactMap { challenge -> Scheme? in
                switch challenge.scheme {
                case "basic": return Scheme(kind: .basic, realm: challenge.realm)
                case "digest": return Scheme(kind: .digest, realm: challenge.realm)
                case "ntlm": return Scheme(kind: .ntlm, realm: nil)
                case "negotiate": return Scheme(kind: .negotiate, realm: nil)
                default: return nil
                }
            }
            if !schemes.isEmpty { return .http(schemes) }
            if let bearer = offered.first(where: { $0.scheme == "bearer" }) {
                let error = bearer.parameters["error"].map { ", error \($0)" } ?? ""
                return .identityAwareProxy(detail: "HTTP \(response.statusCode) with a Bearer challenge\(error)")
            }
            if response.statusCode == 401, !covering.isEmpty {
                return .identityAwareProxy(detail: "HTTP 401 from a host behind the proxy")
            }
        }
        if (300..<400).contains(response.statusCode), !covering.isEmpty,
           let location = response.headers["Location"], let target = URL(string: location, relativeTo: url)?.absoluteURL,
           let host = URLNormalization.host(of: target),
           covering.contains(where: { URLNormalization.host(of: $0.authorizeURL) == host })
        {
            return .identityAwareProxy(detail: "redirected to the identity provider at \(host)")
        }
        if let envelope = Self.envelope(of: response), let code = envelope.code, envelope.isTokenChallenge {
            let message = envelope.message ?? (code == 499 ? "Token Required" : "Invalid token")
            return .arcGISToken(code: code, message: message)
        }
        return nil
    }

    /// The ArcGIS error document of a small JSON (or JSON-looking) body.
    private static func envelope(of response: TransportResponse) -> ArcGISErrorEnvelope? {
        guard response.body.count < 64 * 1024, response.body.first(where: { !$0.isWhitespace }) == UInt8(ascii: "{") else { return nil }
        return ArcGISErrorEnvelope(body: response.body)
    }
}

extension UInt8 {
    /// Whether the byte is ASCII white space.
    fileprivate var isWhitespace: Bool { self == 0x20 || self == 0x09 || self == 0x0A || self == 0x0D }
}
