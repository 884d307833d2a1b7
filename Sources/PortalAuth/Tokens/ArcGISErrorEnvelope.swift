package import Foundation
package import PortalAuthCore

/// The error document ArcGIS REST sends, usually with HTTP 200:
/// `{"error":{"code":498,"message":"Invalid token.","details":[]}}`.
///
/// Token endpoints may add the OAuth fields inside it: `"error":"invalid_grant","error_description":"…"`.
/// Codes seen: 400 (e.g. "Unable to generate token."), 403 (no permission), 498 (invalid or expired token),
/// 499 (token required).
package struct ArcGISErrorEnvelope: Sendable, Equatable {
    /// The ArcGIS error code, e.g. 498.
    package var code: Int?
    /// The ArcGIS message, e.g. "Invalid token.".
    package var message: String?
    /// The detail strings.
    package var details: [String]
    /// The OAuth error code inside the envelope, e.g. `invalid_grant`.
    package var oauthError: String?
    /// The OAuth error description inside the envelope.
    package var oauthErrorDescription: String?

    /// Creates an envelope.
    package init(
        code: Int?, message: String?, details: [String] = [], oauthError: String? = nil,
        oauthErrorDescription: String? = nil
    ) {
        self.code = code
        self.message = message
        self.details = details
        self.oauthError = oauthError
        self.oauthErrorDescription = oauthErrorDescription
    }

    /// Reads the envelope from a parsed document; `nil` when `json` is not `{"error": {…}}`.
    package init?(json: JSONValue) {
        guard let error = json["error"]?.objectValue else { return nil }
        code = error["code"].flatMap { $0.integerValue ?? $0.stringValue.flatMap { Int64($0) } }.map { Int($0) }
        message = error["message"]?.stringValue
        details = error["details"]?.arrayValue?.compactMap(\.stringValue) ?? []
        oauthError = error["error"]?.stringValue
        oauthErrorDescription = error["error_description"]?.stringValue
    }

    /// Reads the envelope from a response body; `nil` when the body is not JSON or not an envelope.
    package init?(body: Data) {
        guard let json = try? JSONValue.parse(body) else { return nil }
        self.init(json: json)
    }

    /// Whether the code says the token is invalid or missing (498, 499): the server wants a (new) token.
    package var isTokenChallenge: Bool {
        code == 498 || code == 499
    }
}
