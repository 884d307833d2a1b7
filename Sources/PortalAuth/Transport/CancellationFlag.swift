import Synchronization

/// A flag set by a task's cancellation handler and read by libcurl's progress callback on the transfer thread.
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
