import Foundation
import Synchronization

/// Runs blocking work (a read that waits, `curl_easy_perform`, `waitpid`, `poll`) on a thread of its own, off
/// Swift's cooperative pool, so that a blocked call never holds one of the pool's few threads.
///
/// Modelled on NIO's `NIOThreadPool.runIfActive`: the caller is suspended until the work ends and then resumed
/// with its result; a task cancelled before the work starts never runs it (``run(name:_:)`` throws
/// `CancellationError`). Once started, the work runs to its end: a caller that wants it stopped early tells it so
/// through its own means (a flag the work polls, a wake pipe) from a `withTaskCancellationHandler` around the call.
///
/// The one place in the package that starts threads.
package enum BlockingWork {
    /// Where one call stands; the cancellation handler and the new thread race for the first change.
    private enum Phase {
        /// The thread may start the work.
        case pending
        /// The work has started (it now runs to its end).
        case started
        /// The task was cancelled before the work started: it never will.
        case cancelled
    }

    /// Runs `body` on a new thread and returns its result or throws its error.
    ///
    /// - Throws: `CancellationError`, without running `body`, when the calling task is cancelled before `body`
    ///   starts; otherwise what `body` throws.
    package static func run<T: Sendable>(
        name: String = "PortalAuth.blocking", _ body: @escaping @Sendable () throws -> T
    ) async throws -> T {
        let phase = Mutex(Phase.pending)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                // A task cancelled already has run the handler below before this point.
                guard phase.withLock({ $0 == .pending }) else {
                    continuation.resume(throwing: CancellationError())
                    return
                }
                detach(name: name) {
                    let starts = phase.withLock { phase -> Bool in
                        guard phase == .pending else { return false }
                        phase = .started
                        return true
                    }
                    guard starts else {
                        continuation.resume(throwing: CancellationError())
                        return
                    }
                    continuation.resume(with: Result { try body() })
                }
            }
        } onCancel: {
            phase.withLock { phase in
                if phase == .pending { phase = .cancelled }
            }
        }
    }

    /// Starts `body` on a new thread that nobody waits for (a child process's reaper, a reader feeding a stream).
    package static func detach(name: String = "PortalAuth.blocking", _ body: @escaping @Sendable () -> Void) {
        let thread = Thread(block: body)
        thread.name = name
        thread.start()
    }
}
