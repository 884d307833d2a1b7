package import Foundation

/// The one rule that says whether a token is fresh enough to hand out, for access tokens and ID tokens, in the
/// library and the tool alike (`TokenKeeper` asks it before a refresh, under the store's lock after re-reading the
/// entry, and of the refresh's result).
///
/// A token is fresh enough when it has more than the minimum validity asked for left. A provider may issue tokens
/// shorter than that (Keycloak's 5 minutes, LemonLDAP::NG's seconds, against a default of 300 s): no refresh can then
/// give what was asked, and refreshing on every call would spend a refresh token per call (with rotation and reuse
/// detection, each extra refresh risks the sign-in). So a token whose lifetime (from its issue, recorded with it
/// in the store, to its expiry) is at most the minimum validity is fresh enough while it is in the first
/// ``shortLifetimeShare`` of its lifetime: it still has at least half of it left. A token another process refreshed
/// counts the same, since its issue time is read from the store.
///
/// Half, because it is the most a caller can be promised without refreshing on every call: a refresh every half
/// lifetime at most, however often tokens are asked for, and every token handed out keeps at least half its lifetime
/// (10 s of a 20-second token). It is the same share as the ArcGIS refresh-token exchange's cap
/// (`TokenKeeper.needsExchange`).
package enum TokenFreshness {
    /// The share of a short token's lifetime during which it is handed out without a refresh: the first half.
    package static let shortLifetimeShare = 0.5

    /// Whether a token is fresh enough at `now` for a caller that wants it valid for `minimumValidity`.
    ///
    /// - Parameters:
    ///   - issuedAt: when the token was issued (the moment its request left), nil when not recorded (entries written
    ///     before it was): the token then has to have `minimumValidity` left.
    ///   - expiresAt: when it expires.
    package static func isFresh(issuedAt: Date?, expiresAt: Date, minimumValidity: Duration, now: Date) -> Bool {
        let left = expiresAt.timeIntervalSince(now)
        if left > minimumValidity.timeInterval { return true }
        guard left > 0, let issuedAt else { return false }
        let lifetime = expiresAt.timeIntervalSince(issuedAt)
        // Only a provider's lifetime shorter than (or equal to) what is asked: a longer token refreshes by the margin.
        guard lifetime > 0, lifetime <= minimumValidity.timeInterval else { return false }
        // Stored times are whole seconds, so a token issued a moment ago may seem issued a fraction in the future.
        return now.timeIntervalSince(issuedAt) < lifetime * shortLifetimeShare
    }

    /// Whether a token issued at `issuedAt` (nil: not recorded) is still in the first half of its lifetime at `now`,
    /// whatever its length: what a token just refreshed must be to be handed out (never one that expired as it came,
    /// `expires_in: 0`, nor a 1-second token whose answer took 600 ms).
    package static func isInFirstHalf(issuedAt: Date?, expiresAt: Date, now: Date) -> Bool {
        guard let issuedAt, expiresAt > now else { return false }
        let lifetime = expiresAt.timeIntervalSince(issuedAt)
        return lifetime > 0 && now.timeIntervalSince(issuedAt) < lifetime * shortLifetimeShare
    }

    /// The lifetime, in whole seconds, of a token issued at `issuedAt` that expires at `expiresAt`; nil when the issue
    /// time was not recorded.
    package static func lifetime(issuedAt: Date?, expiresAt: Date) -> Int? {
        guard let issuedAt else { return nil }
        let seconds = expiresAt.timeIntervalSince(issuedAt).rounded()
        return seconds.isFinite && abs(seconds) < 1e12 ? Int(seconds) : nil
    }
}
