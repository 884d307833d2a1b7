/// When and how a credential refreshes its access token.
///
/// Expiry times are computed on this machine (the moment the token request was sent plus the
/// server's `expires_in`), so a server clock that is off does not matter; the margin then covers
/// the request's own travel time and a resource server whose clock runs ahead.
public struct RefreshPolicy: Sendable, Equatable {
    /// Refresh when the access token has less than this left (default 5 minutes).
    ///
    /// A provider may issue tokens for less than this (Keycloak's default is 5 minutes, some issue seconds): such a
    /// token is used until half its lifetime has passed, then refreshed, rather than refreshed at every use; the same
    /// holds for the ID token when it is the one asked for, and for tokens another process refreshed.
    public var margin: Duration
    /// How many times a failure that certainly did not use up the refresh token (the host unresolved, the
    /// connection refused, HTTP 408, 429 or 503) is tried in all before giving up. A request that may have reached
    /// the provider (a time-out or broken connection after sending, a 500, a gateway's 502 or 504) is never
    /// sent again: with rotating refresh tokens the provider would take the second use for theft.
    public var attempts: Int
    /// The first pause between attempts; it doubles each time, up to `maximumBackoff`.
    public var initialBackoff: Duration
    /// The longest pause between two attempts.
    public var maximumBackoff: Duration
    /// How long one attempt waits for its answer before giving up (default 60 s, the transport's own limit).
    ///
    /// A slow answer is waited for rather than cut short: the request has reached the provider, so it cannot be
    /// asked again with the same refresh token. The store's default lock timeout (90 s) outlasts this wait, so
    /// processes waiting for the lock meanwhile get the new tokens.
    public var attemptTimeout: Duration

    /// Creates a policy.
    public init(
        margin: Duration = .seconds(300), attempts: Int = 3, initialBackoff: Duration = .milliseconds(500),
        maximumBackoff: Duration = .seconds(4), attemptTimeout: Duration = .seconds(60)
    ) {
        self.margin = max(.zero, margin)
        self.attempts = max(1, attempts)
        self.initialBackoff = max(.zero, initialBackoff)
        self.maximumBackoff = max(self.initialBackoff, maximumBackoff)
        self.attemptTimeout = max(.milliseconds(1), attemptTimeout)
    }

    /// The pauses between attempts, in order (`attempts - 1` of them).
    public var backoffs: [Duration] {
        var pauses: [Duration] = []
        var pause = initialBackoff
        for _ in 1..<attempts {
            pauses.append(min(pause, maximumBackoff))
            pause *= 2
        }
        return pauses
    }
}
