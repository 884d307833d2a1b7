public import Foundation
public import PortalAuth
import Synchronization

/// A `SignInClock` whose time passes only when the test or the code under test says so: for deterministic, instant
/// tests of what depends on time (pass it as `SignInSettings.clock`).
///
/// ``advance(by:)`` moves the time on; a ``sleep(for:)`` (a polling sign-in waiting its interval) is recorded in
/// ``sleeps`` and moves the time on by its duration at once, so a device-code sign-in that polls every 5 seconds for
/// a minute takes no real time. With `blocksSleeps` a sleep instead waits until its task is cancelled (to test
/// cancellation).
public final class ManualClock: SignInClock {
    private let state: Mutex<(now: Date, sleeps: [Duration])>
    private let blocksSleeps: Bool

    /// Creates a clock that reads `start` (2027-01-15 08:00:00 UTC by default) until it is moved.
    ///
    /// - Parameter blocksSleeps: whether ``sleep(for:)`` waits for cancellation instead of moving the time on.
    public init(start: Date = Date(timeIntervalSince1970: 1_800_000_000), blocksSleeps: Bool = false) {
        state = Mutex((start, []))
        self.blocksSleeps = blocksSleeps
    }

    /// The clock's current time.
    public var now: Date { state.withLock { $0.now } }

    /// The sleeps asked for, in order.
    public var sleeps: [Duration] { state.withLock { $0.sleeps } }

    /// Moves the time on by `duration`.
    public func advance(by duration: Duration) {
        state.withLock { $0.now = $0.now.addingTimeInterval(Self.seconds(duration)) }
    }

    /// Records the sleep and moves the time on by `duration` at once (or, with `blocksSleeps`, waits until the task
    /// is cancelled); throws `CancellationError` when the task is cancelled.
    public func sleep(for duration: Duration) async throws {
        state.withLock { $0.sleeps.append(duration) }
        if blocksSleeps {
            // Only cancellation ends this wait (a day is a hang guard, never reached in a passing test).
            try await Task.sleep(for: .seconds(86_400))
        }
        try Task.checkCancellation()
        advance(by: duration)
    }

    private static func seconds(_ duration: Duration) -> TimeInterval {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
