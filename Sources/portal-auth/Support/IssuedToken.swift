import Foundation
import PortalAuth

/// The token `portal-auth token` hands out, with what its output formats show about it.
struct IssuedToken {
    /// `.oauthUser` or `.iap`.
    let kind: CredentialKind
    /// "the portal https://…" or "the IAP configuration …".
    let target: String
    /// The portal URL, or the IAP's identity provider (authorize URL): bare, for JSON.
    let url: URL
    let clientID: String?
    /// The IAP configuration file the sign-in was last made with, when known.
    let configurationFile: String?
    let username: String?
    /// The token printed (the access token, or the ID token with `--id-token`).
    let value: String
    /// `Bearer`, or `ID` for an ID token.
    let type: String
    let expirationDate: Date
    /// IAP: the ID token and its expiry (also shown in JSON next to the access token).
    let idToken: String?
    let idTokenExpirationDate: Date?
    /// Whether `value` is the ID token.
    let isIDToken: Bool
    /// When the sign-in's tokens were issued (its sign-in or last refresh), when known: the agent says it, so that
    /// `request` applies the store path's rule to a token a proxy refuses. Not printed.
    var issuedAt: Date? = nil

    /// The token in the one JSON shape of every command that prints a token (see `TokenJSON`).
    ///
    /// An ID token that has expired is left out (`id_token` null, its expiry kept, `id_token_expires_in` 0) rather than
    /// shown beside a valid access token, and not refreshed for the purpose: a refresh for a token not asked for would
    /// spend a refresh token (with rotation each one is a risk to the sign-in), and the provider may send no new ID
    /// token (OIDC Core 12.2). `--id-token` asks for it: it is then kept valid, or a sign-in is asked for.
    func json(at now: Date = Date()) -> JSONValue {
        var extra: [(String, JSONValue)] = []
        if kind == .iap {
            let idTokenShown = idTokenExpirationDate.map { $0 > now } ?? true ? idToken : nil
            extra = [
                ("configuration_file", Output.json(configurationFile)),
                ("id_token", Output.json(idTokenShown)),
                ("id_token_expires_at", Output.json(idTokenExpirationDate.map(UTCTimestamp.iso8601))),
                (
                    "id_token_expires_in",
                    idTokenExpirationDate.map { .integer(Int64(max(0, Int($0.timeIntervalSince(now).rounded(.down))))) }
                        ?? .null
                ),
            ]
        }
        return TokenJSON.object(
            kind: kind, url: url, username: username, clientID: clientID, token: value, tokenType: type,
            expirationDate: expirationDate, sslRequired: false, extra: extra, now: now)
    }

    /// Whole seconds left at `now` (negative once expired).
    func secondsLeft(at now: Date = Date()) -> Int {
        Int(expirationDate.timeIntervalSince(now).rounded(.down))
    }
}
