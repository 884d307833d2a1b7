import Foundation
import Synchronization

/// A token that is asked for again when it is about to expire: the keeper of the credentials that have no refresh
/// token (`TokenCredential`, `OAuthApplicationCredential`), which keep what is needed to ask again in memory.
///
/// Concurrent callers share one request. A token is renewed when less than a fifth of its lifetime, and at most
/// one minute, is left, so that a short-lived token is not renewed on every use.
final class RegeneratingToken: Sendable {
    private struct Held: Sendable {
        var info: TokenInfo
        var issuedAt: Date
    }

    private let held: Mutex<Held>
    private let inFlight = Mutex<Task<TokenInfo, any Error>?>(nil)
    private let generate: @Sendable () async throws -> TokenInfo
    private let now: @Sendable () -> Date

    /// Starts with `initial`, issued at `now()`; `generate` asks for a new token.
    init(initial: TokenInfo, now: @escaping @Sendable () -> Date, generate: @escaping @Sendable () async throws -> TokenInfo) {
        self.held = Mutex(Held(info: initial, issuedAt: now()))
        self.generate = generate
        self.now = now
    }

    /// The token as last received, whether or not it is still valid.
    var current: TokenInfo { held.withLock { $0.info } }

    /// The longest time before expiry at which a token is renewed.
    static let maximumMargin: Duration = .seconds(60)

    /// A token that is still valid beyond the renewal margin, asking for a new one first when needed or when
    /// `force` is set (the server rejected the current one).
    func valid(force: Bool = false) async throws -> TokenInfo {
        let snapshot = held.withLock { $0 }
        if !force, snapshot.info.isValid(for: Self.margin(for: snapshot), at: now()) { return snapshot.info }
        let task: Task<TokenInfo, any Error> = inFlight.withLock { running in
            if let running { return running }
            let task = Task.keepingExecutor {
                let info = try await self.generate()
                let issued = self.now()
                self.held.withLock { $0 = Held(info: info, issuedAt: issued) }
                return info
            }
            running = task
            return task
        }
        defer { inFlight.withLock { if $0 == task { $0 = nil } } }
        return try await withTaskCancellationHandler { try await task.value } onCancel: { task.cancel() }
    }

    /// A fifth of the token's lifetime, at most `maximumMargin`.
    private static func margin(for held: Held) -> Duration {
        let lifetime = max(0, held.info.expirationDate.timeIntervalSince(held.issuedAt))
        return min(maximumMargin, .milliseconds(Int64(lifetime * 200)))
    }
}
