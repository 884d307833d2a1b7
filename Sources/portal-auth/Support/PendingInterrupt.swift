import Synchronization

/// What `Failure.cancellableOnInterrupt` shares with its signal watcher: whether an interrupt came, and how to
/// cancel the task once it runs.
///
/// A non-generic class rather than a captured `Mutex` of a tuple: the box Swift makes for a captured value needs
/// that value's generic type metadata when it is freed, which `portal-auth token` would build at run time for
/// nothing (issue 17).
final class PendingInterrupt: Sendable {
    private let state = Mutex<(cancel: (@Sendable () -> Void)?, interrupted: Bool)>((nil, false))

    /// Records the interrupt and cancels the task if it runs already.
    func interrupt() {
        let cancel = state.withLock { state in
            state.interrupted = true
            return state.cancel
        }
        cancel?()
    }

    /// Records how to cancel the task, and cancels it at once when an interrupt came first.
    func started(cancel: @escaping @Sendable () -> Void) {
        let interrupted = state.withLock { state in
            state.cancel = cancel
            return state.interrupted
        }
        if interrupted { cancel() }
    }

    /// Whether an interrupt came.
    var interrupted: Bool { state.withLock { $0.interrupted } }
}
