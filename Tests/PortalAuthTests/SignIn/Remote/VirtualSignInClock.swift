import Foundation
import Synchronization
@testable import PortalAuth

/// A `SignInClock` whose time passes only when the flow sleeps: each sleep is recorded and moves the time on at once,
/// so polling tests are deterministic and instant. With `blocksSleeps` a sleep waits until the task is cancelled.
final class VirtualSignInClock: SignInClock {
    private let state: Mutex<(now: Date, sleeps: [Duration])>
    private let blocksSleeps: Bool

    init(start: Date = Date(timeIntervalSince1970: 1_800_000_000), blocksSleeps: Bool = false) {
        state = Mutex((start, []))
        self.blocksSleeps = blocksSleeps
    }

    var now: Date { state.withLock { $0.now } }

    /// The sleeps asked for, in order.
    var sleeps: [Duration] { state.withLock { $0.sleeps } }

    func sleep(for duration: Duration) async throws {
        state.withLock { state in state.sleeps.append(duration) }
        if blocksSleeps {
            // Only cancellation ends this wait (a day is a hang guard, never reached in a passing test).
            try await Task.sleep(for: .seconds(86_400))
        }
        try Task.checkCancellation()
        state.withLock { state in state.now = state.now.addingTimeInterval(Double(duration.components.seconds)) }
    }
}
