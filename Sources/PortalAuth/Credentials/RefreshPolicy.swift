/// When and how a credential refreshes its access token.
///
/// Expiry times are computed on this machine (the moment the token request was sent plus the
/// server's `expires_in`), so a server clock that is off does not matter; the margin then covers
/// the request's own travel time and a resource server whose clock runs ahead.
public struct RefreshPolicy: Sendable, Equatable {
    /// Refresh when the access token has less than this left (default 5 minutes).
    public var margin: Duration
    /// How many times a transient failure (network, timeout, HTTP 5xx) is tried in all before giving up.
    public var attempts: Int
    /// The first pause between attempts; it doubles each time, up to `maximumBackoff`.
    public var initialBackoff: Duration
    /// The longest pause between two attempts.
    public var maximumBackoff: Duration
    /// How long one attempt may take before it counts as timed out (and is retried).
    ///
    /// The default (9 s) keeps a whole refresh with the default attempts and pauses (about 29 s) within the
    /// store's default 30-second lock timeout, so that processes waiting for the lock while the identity
    /// provider hangs get the lock, rather than a lock timeout.
    public var attemptTimeout: Duration

    /// Creates a policy.
    public init(
        margin: Duration = .seconds(300), attempts: Int = 3, initialBackoff: Duration = .milliseconds(500),
        maximumBackoff: Duration = .seconds(4), attemptTimeout: Duration = .seconds(9)
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
