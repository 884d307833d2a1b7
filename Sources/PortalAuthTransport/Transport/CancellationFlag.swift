import Synchronization

/// A flag set by a task's cancellation handler and read by the transfer's callbacks and the event loop's thread.
final class CancellationFlag: Sendable {
    private let state = Atomic<Bool>(false)

    /// Marks the transfer as cancelled.
    func cancel() {
        state.store(true, ordering: .releasing)
    }

    /// Whether `cancel()` was called.
    var isCancelled: Bool {
        state.load(ordering: .acquiring)
    }
}
