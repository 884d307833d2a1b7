import Foundation
import PortalAuthCore
import PortalAuthStore
import PortalAuthTransport

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
        /// An Identity-Aware Proxy refused a token just issued (after one refresh, a sign-in, or less than a minute
        /// old): another sign-in with the same configuration would bring the same kind of token. The likely causes
        /// are a client ID or scope the proxy does not accept (the token's audience), or a proxy that expects the
        /// other token kind (`refusedIAPToken` says which was sent; see `IAPCredential.tokenSentToProxy`).
        public static let iapTokenRefused = Kind(name: "iapTokenRefused")
        /// HTTP 401/403 with `WWW-Authenticate`: a password (Basic, Digest, NTLM, Negotiate).
        public static let httpAuthentication = Kind(name: "httpAuthentication")
        /// The server asks for a TLS client certificate.
        public static let clientCertificate = Kind(name: "clientCertificate")

        public var description: String { name }
    }

    /// What the server asked for.
    public let kind: Kind
    /// The challenged URL, without query.
    package let url: RedactedURL
    /// The HTTP status of the answer (200 for ArcGIS errors in an envelope).
    public let statusCode: Int?
    /// What the server said: the ArcGIS message, the `WWW-Authenticate` schemes, the redirect target host (one line,
    /// control characters neutralised).
    public let detail: String
    /// Whether a credential was sent and refused (as opposed to none being held).
    public let credentialWasRefused: Bool
    /// For `.iapTokenRefused`: which token the proxy refused (the ID token or the access token).
    public let refusedIAPToken: IAPTokenInfo.Token?

    init(
        _ kind: Kind, url: URL, statusCode: Int?, detail: String, credentialWasRefused: Bool = false,
        refusedIAPToken: IAPTokenInfo.Token? = nil
    ) {
        self.kind = kind
        self.url = RedactedURL(url)
        self.statusCode = statusCode
        self.detail = DisplayText.neutralised(detail, limit: 500)  // the server's words: no terminal controls
        self.credentialWasRefused = credentialWasRefused
        self.refusedIAPToken = refusedIAPToken
    }

    /// Refused, or a sign-in is needed (exit 77 in the tool); for `.iapTokenRefused`, where signing in again cannot
    /// help, invalid content (exit 65: the configuration, or the token kind chosen, does not suit the proxy).
    public var category: ErrorCategory { kind == .iapTokenRefused ? .invalidContent : .refused }

    /// The name of the token that was refused, and of the other one.
    private var tokenNames: (sent: String, other: String) {
        refusedIAPToken == .accessToken ? ("access token", "ID token") : ("ID token", "access token")
    }

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
        case .iapTokenRefused:
            let names = tokenNames
            return
                "the Identity-Aware Proxy in front of \(url) refused a fresh \(names.sent)\(said); signing in again would "
                + "bring the same kind of token. Likely causes: the configuration's client ID or scope is not one the proxy "
                + "accepts (the token's audience), or the proxy expects the \(names.other) instead"
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
