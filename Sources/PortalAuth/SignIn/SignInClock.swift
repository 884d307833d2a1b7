public import Foundation

/// The time source and the waits of a sign-in that polls (the device code), so that tests decide when time passes.
public protocol SignInClock: Sendable {
    /// The current time.
    var now: Date { get }
    /// Waits for `duration`; throws `CancellationError` at once when the task is cancelled.
    func sleep(for duration: Duration) async throws
}

/// The system clock and `Task.sleep`.
package struct SystemSignInClock: SignInClock {
    /// Creates the clock.
    public init() {}

    public var now: Date { Date() }

    public func sleep(for duration: Duration) async throws {
        try await Task.sleep(for: duration)
    }
}
