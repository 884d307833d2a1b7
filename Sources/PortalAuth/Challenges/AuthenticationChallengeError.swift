import Foundation

/// A request was challenged and no credential answered it: no handler, a handler that continued without a
/// credential, or a credential the server refused again after the one retry.
///
/// The message names the URL (without its query) and what the server said, never a token or password. Match on
/// `kind`; the set of kinds may grow.
public struct AuthenticationChallengeError: CategorizedError, CustomStringConvertible, Equatable {
    /// What the server asked for, for matching: `error.kind == .tokenRequired`.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        fileprivate let name: String

        /// ArcGIS error 499: the resource needs a token and none was sent.
        public static let tokenRequired = Kind(name: "tokenRequired")
        /// ArcGIS error 498: the token sent is invalid or expired.
        public static let invalidToken = Kind(name: "invalidToken")
        /// An Identity-Aware Proxy wants a sign-in to its identity provider.
        public static let identityAwareProxy = Kind(name: "identityAwareProxy")
        /// HTTP 401/403 with `WWW-Authenticate`: a password (Basic, Digest, NTLM, Negotiate).
        public static let httpAuthentication = Kind(name: "httpAuthentication")
        /// The server asks for a TLS client certificate.
        public static let clientCertificate = Kind(name: "clientCertificate")

        public var description: String { name }
    }

    /// What the server asked for.
    public let kind: Kind
    /// The challenged URL, without query.
    public let url: RedactedURL
    /// The HTTP status of the answer (200 for ArcGIS errors in an envelope).
    public let statusCode: Int?
    /// What the server said: the ArcGIS message, the `WWW-Authenticate` schemes, the redirect target host (one line,
    /// control characters neutralised, see `DisplayText`).
    public let detail: String
    /// Whether a credential was sent and refused (as opposed to none being held).
    public let credentialWasRefused: Bool

    init(_ kind: Kind, url: URL, statusCode: Int?, detail: String, credentialWasRefused: Bool = false) {
        self.kind = kind
        self.url = RedactedURL(url)
        self.statusCode = statusCode
        self.detail = DisplayText.neutralised(detail, limit: 500)  // the server's words: no terminal controls
        self.credentialWasRefused = credentialWasRefused
    }

    /// Refused, or a sign-in is needed.
    public var category: ErrorCategory { .refused }

    public var description: String {
        let said = detail.isEmpty ? "" : " (\(detail))"
        switch kind {
        case .tokenRequired, .invalidToken:
            let what = kind == .tokenRequired ? "requires an ArcGIS token" : "did not accept the ArcGIS token"
            return credentialWasRefused
                ? "\(url) did not accept the credential given for it\(said); sign in again with an account that has access"
                : "\(url) \(what)\(said); sign in to its portal or server first"
        case .identityAwareProxy:
            return credentialWasRefused
                ? "the Identity-Aware Proxy in front of \(url) refused the IAP sign-in\(said)"
                : "\(url) is behind an Identity-Aware Proxy that wants a sign-in\(said); sign in with its IAP configuration first"
        case .httpAuthentication:
            return credentialWasRefused
                ? "\(url) refused the username and password\(said)"
                : "\(url) asks for a username and password\(said)"
        case .clientCertificate:
            return credentialWasRefused
                ? "\(url) did not accept the client certificate\(said)"
                : "\(url) asks for a TLS client certificate (.p12/.pfx)\(said)"
        default:
            return "\(url) asked for a credential\(said)"
        }
    }
}
