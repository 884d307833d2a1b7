import Foundation
import PortalAuthStore
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
    init(
        initial: TokenInfo, now: @escaping @Sendable () -> Date,
        generate: @escaping @Sendable () async throws -> TokenInfo
    ) {
        self.held = Mutex(Held(info: initial, issuedAt: now()))
        self.generate = generate
        self.now = now
    }

    /// The token as last received, whether or not it is still valid.
    var current: TokenInfo { held.withLock { $0.info } }

    /// A token to return at once, or the renewal to wait for.
    private enum Next {
        case ready(TokenInfo)
        case wait(Task<TokenInfo, any Error>)
    }

    /// The longest time before expiry at which a token is renewed.
    static let maximumMargin: Duration = .seconds(60)

    /// A token that is still valid beyond the renewal margin, asking for a new one first when needed or when
    /// `force` is set (the server rejected the current one).
    ///
    /// - Parameter refused: with `force`, the token the server refused. One renewal per expiry, however many
    ///   requests saw it refused: a renewal is asked for only while `refused` is still the current token; once
    ///   another caller renewed it, the new token is returned (renewed again only if it is not valid). A renewal
    ///   already under way is joined. Without `refused`, `force` always asks for a new token.
    func valid(force: Bool = false, refused: String? = nil) async throws -> TokenInfo {
        // Decided under the in-flight lock: a renewal stores its token before it ends and is forgotten only after,
        // so a caller that finds none under way sees the token of the last one.
        let next: Next = inFlight.withLock { running in
            let snapshot = held.withLock { $0 }
            let force = force && (refused == nil || refused == snapshot.info.accessToken)
            if !force, snapshot.info.isValid(for: Self.margin(for: snapshot), at: now()) {
                return .ready(snapshot.info)
            }
            if let running { return .wait(running) }
            let task = Task.keepingExecutor {
                let info = try await self.generate()
                let issued = self.now()
                self.held.withLock { $0 = Held(info: info, issuedAt: issued) }
                return info
            }
            running = task
            return .wait(task)
        }
        let task: Task<TokenInfo, any Error>
        switch next {
        case .ready(let info): return info
        case .wait(let running): task = running
        }
        defer { inFlight.withLock { if $0 == task { $0 = nil } } }
        return try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            task.cancel()
        }
    }

    /// A fifth of the token's lifetime, at most `maximumMargin`.
    private static func margin(for held: Held) -> Duration {
        let lifetime = max(0, held.info.expirationDate.timeIntervalSince(held.issuedAt))
        return min(maximumMargin, .milliseconds(Int64(lifetime * 200)))
    }
}
