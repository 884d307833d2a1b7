/// A token service that did not give a token for a username and password (`generateToken`) or for an
/// application's client ID and secret (client credentials), or that could not be found.
///
/// Failures of the HTTP exchange itself stay `TransportError`s, and answers that are not token responses stay
/// `TokenEndpointError`s. The message names the service without its query and the username or client ID, never
/// the password or secret. Match on `kind`; the set of kinds may grow.
import PortalAuthCore
import PortalAuthStore
import PortalAuthTransport

package struct TokenServiceError: CategorizedError, CustomStringConvertible, Equatable {
    /// What went wrong, for matching: `error.kind == .credentialsRefused`.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        fileprivate let name: String

        /// The service refused the username and password, or the client ID and secret.
        public static let credentialsRefused = Kind(name: "credentialsRefused")
        /// The server says it does not use token-based security (`rest/info`: `isTokenBasedSecurity` false or no
        /// `tokenServicesUrl`).
        public static let notTokenSecured = Kind(name: "notTokenSecured")
        /// `{root}/rest/info?f=json` did not describe the server (not JSON, an error, no `authInfo`).
        public static let discoveryFailed = Kind(name: "discoveryFailed")
        /// The URL given cannot name a portal or server (not http(s), no host, http to a remote host).
        public static let invalidURL = Kind(name: "invalidURL")

        public var description: String { name }
    }

    /// What went wrong.
    public let kind: Kind
    /// The service, the `rest/info` document or the URL given, without query.
    public let url: RedactedURL
    /// Who was refused: `the user alice`, `the client ID abc`; empty for other kinds.
    public let principal: String
    /// What the server said, or what was wrong; cleaned of control characters.
    public let detail: String

    init(_ kind: Kind, url: RedactedURL, principal: String = "", detail: String) {
        self.kind = kind
        self.url = url
        self.principal = principal
        self.detail = TokenEndpointError.clean(detail, limit: 300)
    }

    public var category: ErrorCategory {
        switch kind {
        case .credentialsRefused: return .refused
        case .invalidURL, .notTokenSecured: return .usage
        default: return .invalidContent
        }
    }

    public var description: String {
        var said = detail.isEmpty ? "" : ": \(detail)"
        while said.hasSuffix(".") { said.removeLast() }  // the server's own sentence, then ours
        switch kind {
        case .credentialsRefused:
            return "The token service \(url) refused \(MessagePart.or(principal, "the credentials given"))\(said). "
                + "Check them and try again."
        case .notTokenSecured:
            return "The server \(url) does not use ArcGIS token security\(said). It may be open, or protected by "
                + "the web server (HTTP password or client certificate): use a network credential instead."
        case .discoveryFailed:
            return "Could not find the token service of the server from \(url)\(said). Check the URL: give the "
                + "portal URL (https://host/portal) or a service URL (https://host/server/rest/services/…)."
        default:
            return "Cannot get a token for \(url)\(said)."
        }
    }
}
