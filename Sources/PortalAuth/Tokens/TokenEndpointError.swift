package import Foundation
package import PortalAuthCore
package import PortalAuthTransport

/// A token endpoint that did not give tokens: the identity provider refused (RFC 6749 §5.2 error JSON or the
/// ArcGIS error envelope), failed (5xx), or answered with something that is not a token response.
///
/// The message names the endpoint without its query and the provider's own error code; it never repeats a
/// response body that could hold a token (for non-JSON bodies only an HTML page title is shown).
package struct TokenEndpointError: CategorizedError, CustomStringConvertible, Equatable {
    /// What went wrong, for matching; the set may grow.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        fileprivate let name: String

        /// The provider refused: an OAuth `error`, an ArcGIS error envelope, or HTTP 400/401 whatever the body.
        public static let refused = Kind(name: "refused")
        /// The provider failed: HTTP 5xx, `server_error`, `temporarily_unavailable`, or an ArcGIS code ≥ 500.
        public static let serverFailure = Kind(name: "serverFailure")
        /// A status that is neither success nor an error the provider explained (a redirect, a bare 404).
        public static let unexpectedStatus = Kind(name: "unexpectedStatus")
        /// Not a token response: not JSON, the wrong content type, no `access_token`, a field of the wrong type.
        public static let invalidResponse = Kind(name: "invalidResponse")

        public var description: String { name }
    }

    /// What went wrong.
    public let kind: Kind
    /// The endpoint, without query.
    public let endpoint: RedactedURL
    /// The HTTP status.
    public let statusCode: Int
    /// The OAuth error code (top level, or inside the ArcGIS envelope), e.g. `invalid_grant`.
    public let errorCode: String?
    /// The provider's description, cleaned of control characters and shortened.
    public let errorDescription: String?
    /// The provider's `error_uri`.
    public let errorURI: String?
    /// The ArcGIS error code from the envelope, e.g. 498.
    public let arcGISCode: Int?
    /// The ArcGIS message from the envelope, cleaned and shortened.
    public let arcGISMessage: String?
    /// For `invalidResponse`, `unexpectedStatus` and bare failures: what was wrong with the answer.
    public let problem: String?
    /// Whether the endpoint is the token endpoint or the device authorization endpoint (RFC 8628), whose answers
    /// are read alike: the message names the one that answered, with the advice that fits it.
    package var isDeviceAuthorization = false

    /// The endpoint's name in the message.
    private var endpointName: String { isDeviceAuthorization ? "device authorization endpoint" : "token endpoint" }

    package init(
        _ kind: Kind, endpoint: URL, statusCode: Int, errorCode: String? = nil, errorDescription: String? = nil,
        errorURI: String? = nil, arcGISCode: Int? = nil, arcGISMessage: String? = nil, problem: String? = nil
    ) {
        self.kind = kind
        self.endpoint = RedactedURL(endpoint)
        self.statusCode = statusCode
        // An empty field says nothing: it is kept as none, so the message leaves its words out (issue 45).
        self.errorCode = MessagePart.nonBlank(errorCode).map { Self.clean($0, limit: 80) }
        self.errorDescription = MessagePart.nonBlank(errorDescription).map { Self.clean($0, limit: 300) }
        self.errorURI = MessagePart.nonBlank(errorURI).map { Self.clean($0, limit: 200) }
        self.arcGISCode = arcGISCode
        self.arcGISMessage = MessagePart.nonBlank(arcGISMessage).map { Self.clean($0, limit: 200) }
        self.problem = MessagePart.nonBlank(problem)
    }

    // MARK: - Meaning

    /// Whether the provider said `invalid_grant`: the code, refresh token or password grant is dead.
    public var isInvalidGrant: Bool {
        errorCode == "invalid_grant"
    }

    /// Whether the user must sign in again: `invalid_grant`, an interaction the provider requires, ArcGIS 498
    /// (the presented token — here the refresh token — is invalid), or a message saying the refresh token
    /// expired or is invalid.
    public var requiresSignIn: Bool {
        if isInvalidGrant || arcGISCode == 498 { return true }
        // HTTP 400/401 without an explanation (an empty or non-JSON body): the grant was refused, and the only
        // thing that can change the answer is a new sign-in.
        if kind == .refused && errorCode == nil && arcGISCode == nil && errorDescription == nil
            && [400, 401].contains(statusCode)
        {
            return true
        }
        if let errorCode, ["interaction_required", "login_required", "consent_required"].contains(errorCode) {
            return true
        }
        let texts = [errorDescription, arcGISMessage].compactMap { $0?.lowercased() }
        return texts.contains { text in
            (text.contains("refresh_token") || text.contains("refresh token"))
                && (text.contains("expired") || text.contains("invalid") || text.contains("revoked"))
        }
    }

    public var category: ErrorCategory {
        switch kind {
        case .refused: return .refused
        // An answer that is not a token response (HTML, truncated or malformed JSON) means the provider is
        // failing: the same exit status as a 5xx (69), not the "invalid input" one (65) of a corrupted store.
        default: return .unavailable
        }
    }

    // MARK: - Message

    public var description: String {
        switch kind {
        case .refused:
            return "The \(endpointName) \(endpoint) refused the request: \(providerSays)." + advice
        case .serverFailure:
            return "The \(endpointName) \(endpoint) failed with HTTP \(statusCode)\(detailSuffix). "
                + "The identity provider is failing; try again later."
        case .unexpectedStatus:
            return "The \(endpointName) \(endpoint) answered HTTP \(statusCode)\(detailSuffix). "
                + (isDeviceAuthorization ? "Check the device authorization URL." : "Check the portal or token URL.")
        default:
            return "The \(endpointName) \(endpoint) answered HTTP \(statusCode) with something that is not a "
                + (isDeviceAuthorization ? "device authorization" : "token") + " response\(detailSuffix). "
                + (isDeviceAuthorization ? "Check the device authorization URL." : "Check the portal or token URL.")
        }
    }

    /// The provider's codes and texts, e.g. `invalid_grant (Invalid refresh token) [ArcGIS 498: Invalid token.]`.
    private var providerSays: String {
        var parts: [String] = []
        if let errorCode {
            parts.append(errorDescription.map { "\(errorCode) (\($0))" } ?? errorCode)
        } else if let errorDescription {
            parts.append(errorDescription)
        }
        if let arcGISCode {
            parts.append("ArcGIS error \(arcGISCode)" + (arcGISMessage.map { ": \($0)" } ?? ""))
        } else if let arcGISMessage {
            parts.append(arcGISMessage)
        }
        if let errorURI { parts.append("see \(errorURI)") }
        if parts.isEmpty, let problem { return "HTTP \(statusCode) with \(problem) and no OAuth error code" }
        return parts.isEmpty ? "no reason given" : parts.joined(separator: "; ")
    }

    private var detailSuffix: String {
        var parts: [String] = []
        if errorCode != nil || arcGISCode != nil || errorDescription != nil { parts.append(providerSays) }
        if let problem { parts.append(problem) }
        return parts.isEmpty ? "" : ": " + parts.joined(separator: "; ")
    }

    private var advice: String {
        // Microsoft Entra ID names its error by an AADSTS code: its own fix is more precise than the generic one.
        if let entra = EntraErrorAdvice.advice(forDescription: errorDescription) { return " " + entra }
        if requiresSignIn {
            return
                " The sign-in has expired or was revoked: sign in again (OAuthUserCredential.credential(for:settings:) or IAPCredential.credential(for:settings:replacing:))."
        }
        switch errorCode {
        case "invalid_client" where isDeviceAuthorization:
            return " Check the client ID: the identity provider does not know this client."
        case "unauthorized_client" where isDeviceAuthorization:
            return " Check the client ID, and that the identity provider allows this client the device code "
                + "(urn:ietf:params:oauth:grant-type:device_code); else sign in through a browser."
        case "invalid_client", "unauthorized_client":
            return " Check the client ID and that the application is registered for this redirect URL."
        case "invalid_scope":
            return " Check the requested scopes."
        default:
            return ""
        }
    }

    /// A server's text made safe to show (no terminal escapes, one line; see `DisplayText`), shortened to `limit`.
    package static func clean(_ text: String, limit: Int) -> String {
        DisplayText.neutralised(text, limit: limit)
    }
}
