/// A token revocation that did not succeed: the portal's `revokeToken` or an RFC 7009 endpoint refused,
/// failed, answered something unusable, or could not be reached.
///
/// The message names the credential, the endpoint without its query and the server's own error code and text;
/// never the token.
import PortalAuthCore
import PortalAuthTransport

package struct RevocationError: CategorizedError, Sendable, Equatable, CustomStringConvertible {
    private enum Code: Sendable, Equatable {
        /// The server said no: the ArcGIS envelope or an OAuth error.
        case refused(String)
        /// HTTP 5xx, `server_error`, `temporarily_unavailable`, an ArcGIS code ≥ 500.
        case serverFailure(status: Int, String?)
        /// A status that is neither success nor an explained error (a redirect, a bare 404).
        case unexpectedStatus(Int)
        /// A 2xx answer that is not what a revocation endpoint sends.
        case invalidResponse(String)
        /// No answer: the network failed (the transport error's text and category).
        case unreachable(String, ErrorCategory)
    }

    private let code: Code
    /// What the credential is for ("the portal https://…", "the IAP configuration /path/file.json").
    public let target: String
    /// The revocation endpoint, without query.
    public let endpoint: RedactedURL

    private init(_ code: Code, target: String, endpoint: RedactedURL) {
        self.code = code
        self.target = target
        self.endpoint = endpoint
    }

    static func refused(_ says: String, target: String, endpoint: RedactedURL) -> RevocationError {
        RevocationError(.refused(says), target: target, endpoint: endpoint)
    }
    static func serverFailure(status: Int, says: String?, target: String, endpoint: RedactedURL) -> RevocationError {
        RevocationError(.serverFailure(status: status, says), target: target, endpoint: endpoint)
    }
    static func unexpectedStatus(_ status: Int, target: String, endpoint: RedactedURL) -> RevocationError {
        RevocationError(.unexpectedStatus(status), target: target, endpoint: endpoint)
    }
    static func invalidResponse(_ problem: String, target: String, endpoint: RedactedURL) -> RevocationError {
        RevocationError(.invalidResponse(problem), target: target, endpoint: endpoint)
    }
    static func unreachable(_ error: any Error, target: String, endpoint: RedactedURL) -> RevocationError {
        let category = (error as? any CategorizedError)?.category ?? .unavailable
        return RevocationError(.unreachable("\(error)", category), target: target, endpoint: endpoint)
    }

    /// Whether trying again later may help (the server failed or could not be reached).
    public var isTransient: Bool {
        switch code {
        case .serverFailure: return true
        case .unreachable(_, let category): return category == .unavailable || category == .timedOut
        case .refused, .unexpectedStatus, .invalidResponse: return false
        }
    }

    public var category: ErrorCategory {
        switch code {
        case .refused: return .refused
        case .serverFailure, .unexpectedStatus: return .unavailable
        case .invalidResponse: return .invalidContent
        case .unreachable(_, let category): return category
        }
    }

    public var description: String {
        let head = "could not revoke the tokens of \(MessagePart.or(target, "the sign-in")) at \(endpoint)"
        switch code {
        case .refused(let says):
            return "\(head): the server refused" + MessagePart.given(": ", says)
        case .serverFailure(let status, let says):
            return "\(head): the server failed (HTTP \(status)\(MessagePart.given(", ", says)))"
        case .unexpectedStatus(let status):
            return "\(head): unexpected HTTP \(status)"
        case .invalidResponse(let problem):
            return "\(head): " + MessagePart.or(problem, "its answer cannot be used")
        case .unreachable(let error, _):
            return "\(head): " + MessagePart.or(error, "it cannot be reached")
        }
    }
}
