import Foundation

/// The token `portal-auth token` hands out, with what its output formats show about it.
struct IssuedToken {
    /// `oauth-user` or `iap`.
    let kind: String
    /// "the portal https://…" or "the IAP configuration …".
    let target: String
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

    /// Whole seconds left at `now` (negative once expired).
    func secondsLeft(at now: Date = Date()) -> Int {
        Int(expirationDate.timeIntervalSince(now).rounded(.down))
    }
}
