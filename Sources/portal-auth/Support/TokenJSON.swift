import Foundation
import PortalAuth

/// The one JSON shape of every command that prints a token (`token`, `refresh`, `generate-token`, `app-token`):
///
/// `kind` (`oauth-user`, `iap`, `token`, `oauth-application`), `url` (the portal, server or identity provider, a
/// bare URL), `username` and `client_id` (null when none), `token`, `token_type` (`Bearer`, or `ID` for an ID
/// token), `expires_at` (ISO 8601, UTC), `expires_in` (whole seconds left), `ssl_required`; then fields of the kind
/// (IAP: `configuration_file`, `id_token`, `id_token_expires_at`, `id_token_expires_in`; generate-token:
/// `referer`, `token_service_url`).
enum TokenJSON {
    /// The object, common fields first.
    static func object(
        kind: CredentialKind, url: URL, username: String?, clientID: String?, token: String, tokenType: String,
        expirationDate: Date, sslRequired: Bool, extra: [(String, JSONValue)] = [], now: Date = Date()
    ) -> JSONValue {
        let members: [(key: String, value: JSONValue)] =
            [
                ("kind", .string(kind.rawValue)),
                ("url", .string(url.absoluteString)),
                ("username", Output.json(username)),
                ("client_id", Output.json(clientID)),
                ("token", .string(token)),
                ("token_type", .string(tokenType)),
                ("expires_at", .string(UTCTimestamp.iso8601(expirationDate))),
                ("expires_in", .integer(Int64(max(0, Int(expirationDate.timeIntervalSince(now).rounded(.down)))))),
                ("ssl_required", .bool(sslRequired)),
            ] + extra.map { (key: $0.0, value: $0.1) }
        return .object(JSONObject(members))
    }
}
