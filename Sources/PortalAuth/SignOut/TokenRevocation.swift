import Foundation
import PortalAuthCore
import PortalAuthStore
import PortalAuthTransport

/// One token revocation: the ArcGIS portal's `revokeToken` or an RFC 7009 revocation endpoint.
///
/// Holds a token: never printed or logged.
struct TokenRevocation: Sendable {
    /// Which protocol the endpoint speaks.
    enum Style: Sendable {
        /// `POST {portal}/sharing/rest/oauth2/revokeToken` with `client_id`, `auth_token`, `token_type_hint`, `f=json`;
        /// `{"success":true}` on success (also for unknown tokens), the error envelope with HTTP 200 on failure.
        case arcGIS
        /// RFC 7009: `token`, `token_type_hint`, `client_id`; HTTP 200 on success (also for unknown tokens).
        case rfc7009
    }

    let style: Style
    let endpoint: URL
    let clientID: String
    let token: String
    /// `refresh_token` or `access_token`.
    let tokenTypeHint: String
    /// What the credential is for, in messages.
    let target: String

    /// The revocation of a credential's refresh token (which ends its access tokens too), or of its access
    /// token when it has no refresh token.
    init(style: Style, endpoint: URL, record: StoredCredential, target: String) {
        self.style = style
        self.endpoint = endpoint
        self.clientID = record.clientID
        self.token = record.refreshToken ?? record.accessToken
        self.tokenTypeHint = record.refreshToken == nil ? "access_token" : "refresh_token"
        self.target = target
    }

    /// The form the endpoint receives.
    var request: TransportRequest {
        switch style {
        case .arcGIS:
            return .form(
                endpoint,
                fields: [
                    ("client_id", clientID), ("auth_token", token), ("token_type_hint", tokenTypeHint), ("f", "json"),
                ])
        case .rfc7009:
            return .form(
                endpoint, fields: [("token", token), ("token_type_hint", tokenTypeHint), ("client_id", clientID)])
        }
    }

    /// Sends the revocation, trying transient failures (network, 5xx) again as `policy` says.
    func send(with client: any TransportClient, policy: RefreshPolicy) async throws {
        var backoff = policy.initialBackoff
        for attempt in 1...policy.attempts {
            do {
                return try evaluate(try await sendOnce(with: client))
            } catch let error as RevocationError where error.isTransient && attempt < policy.attempts {
                try await Task.sleep(for: backoff)
                backoff *= 2
            }
        }
    }

    private func sendOnce(with client: any TransportClient) async throws -> TransportResponse {
        do {
            return try await client.send(request)
        } catch let error as CancellationError {
            throw error
        } catch {
            throw RevocationError.unreachable(error, target: target, endpoint: RedactedURL(endpoint))
        }
    }

    // MARK: - Reading the answer

    /// Whether `response` says the token is revoked; throws what it says otherwise.
    func evaluate(_ response: TransportResponse) throws(RevocationError) {
        let place = RedactedURL(endpoint)
        let json = try? JSONValue.parse(response.body)
        let status = response.statusCode
        if let json, let envelope = ArcGISErrorEnvelope(json: json) {
            let says = Self.describe(envelope)
            if status >= 500 || (envelope.code ?? 0) >= 500 || Self.isFailureCode(envelope.oauthError) {
                throw .serverFailure(status: status, says: says, target: target, endpoint: place)
            }
            throw .refused(says, target: target, endpoint: place)
        }
        if let json, let error = json["error"]?.stringValue {
            let text =
                json["error_description"]?.stringValue.map { "\(Self.clean(error)) (\(Self.clean($0)))" }
                ?? Self.clean(error)
            if status >= 500 || Self.isFailureCode(error) {
                throw .serverFailure(status: status, says: text, target: target, endpoint: place)
            }
            throw .refused(text, target: target, endpoint: place)
        }
        if status >= 500 { throw .serverFailure(status: status, says: nil, target: target, endpoint: place) }
        guard (200..<300).contains(status) else { throw .unexpectedStatus(status, target: target, endpoint: place) }

        switch style {
        case .rfc7009:
            return  // RFC 7009 §2.2: the content of a 200 answer is ignored.
        case .arcGIS:
            guard let object = json?.objectValue else {
                throw .invalidResponse(
                    "the answer is not a JSON object (\(response.body.count) bytes)", target: target, endpoint: place)
            }
            if object["success"]?.boolValue == false {
                throw .refused("the portal answered \"success\": false", target: target, endpoint: place)
            }
        }
    }

    /// `ArcGIS error 400: Unable to revoke token. (invalid_client: …)`.
    private static func describe(_ envelope: ArcGISErrorEnvelope) -> String {
        var text = "ArcGIS error \(envelope.code.map(String.init) ?? "without a code")"
        if let message = envelope.message ?? envelope.details.first { text += ": \(clean(message))" }
        if let oauth = envelope.oauthError {
            text += " (\(clean(oauth))" + (envelope.oauthErrorDescription.map { ": \(clean($0))" } ?? "") + ")"
        }
        return text
    }

    private static func isFailureCode(_ code: String?) -> Bool {
        code == "server_error" || code == "temporarily_unavailable"
    }

    /// A server's text without control characters, shortened.
    private static func clean(_ text: String) -> String {
        TokenEndpointError.clean(text, limit: 200)
    }
}
