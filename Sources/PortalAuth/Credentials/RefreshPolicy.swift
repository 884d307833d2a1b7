/// When and how a credential refreshes its access token.
public struct RefreshPolicy: Sendable, Equatable {
    /// Refresh when the access token has less than this left (default 5 minutes).
    public var margin: Duration
    /// How many times a transient failure (network, 5xx) is tried in all before giving up.
    public var attempts: Int
    /// The first pause between attempts; it doubles each time.
    public var initialBackoff: Duration

    /// Creates a policy.
    public init(margin: Duration = .seconds(300), attempts: Int = 3, initialBackoff: Duration = .milliseconds(500)) {
        self.margin = margin
        self.attempts = max(1, attempts)
        self.initialBackoff = initialBackoff
    }
}
