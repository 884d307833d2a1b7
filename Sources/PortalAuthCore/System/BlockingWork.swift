internal import CPortalAuthSystem
import Foundation
import Synchronization

/// Runs blocking work (a read that waits, a keyring call, a file lock, `waitpid`, `poll`) off Swift's cooperative
/// pool, so that a blocked call never holds one of the pool's few threads.
///
/// Modelled on NIO's `NIOThreadPool.runIfActive`: ``run(name:dedicatedThread:_:)`` queues the work on one small
/// pool of at most ``poolSize`` threads, started only as work needs them (a process that blocks on nothing starts
/// none); the caller is suspended until the work ends and then resumed with its result; a task cancelled before
/// the work starts never runs it (``run(name:dedicatedThread:_:)`` throws `CancellationError`). Once started, the
/// work runs to its end: a caller that wants it stopped early tells it so through its own means (a flag the work
/// polls, a wake pipe) from a `withTaskCancellationHandler` around the call.
///
/// Work that waits on a person or another program for as long as they take (the browser's redirect, a typed
/// secret) asks for a thread of its own (`dedicatedThread: true`), and so do watchers that live as long as what
/// they watch (``detach(name:_:)``): in the pool they would hold its few threads and stall the short work queued
/// behind them. HTTP never comes here: every transfer runs on libcurl's event loop (`CurlMultiLoop`).
///
/// On the thread of a one-shot command (`CallerThreadExecutor`, `portal-auth token` and `refresh`), which has
/// nothing to do but wait for it, pool work runs on the calling thread itself: no pool thread, no hand-off.
///
/// The one place in the package that starts threads, with the event loop's.
package enum BlockingWork {
    /// Most threads of the pool; more work waits in its queue, first in, first out.
    package static let poolSize = 4

    /// Where one call stands; the cancellation handler and the thread race for the first change.
    private enum Phase {
        /// The thread may start the work.
        case pending
        /// The work has started (it now runs to its end).
        case started
        /// The task was cancelled before the work started: it never will.
        case cancelled
    }

    /// The pool of the process.
    private static let pool = ThreadPool(size: poolSize, name: "PortalAuth.pool")

    /// Runs `body` on a thread of the pool (or, with `dedicatedThread`, on a new thread of its own) and returns its
    /// result or throws its error.
    ///
    /// - Parameters:
    ///   - name: the thread's name when it is a dedicated one.
    ///   - dedicatedThread: for work that waits without bound on a person or another program.
    /// - Throws: `CancellationError`, without running `body`, when the calling task is cancelled before `body`
    ///   starts; otherwise what `body` throws.
    package static func run<T: Sendable>(
        name: String = "PortalAuth.blocking", dedicatedThread: Bool = false, _ body: @escaping @Sendable () throws -> T
    ) async throws -> T {
        if !dedicatedThread && CallerThreadExecutor.isRunningHere {
            try Task.checkCancellation()
            return try body()
        }
        let phase = Mutex(Phase.pending)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                // A task cancelled already has run the handler below before this point.
                guard phase.withLock({ $0 == .pending }) else {
                    continuation.resume(throwing: CancellationError())
                    return
                }
                let job: @Sendable () -> Void = {
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
                if dedicatedThread { detach(name: name, job) } else { pool.submit(job) }
            }
        } onCancel: {
            phase.withLock { phase in
                if phase == .pending { phase = .cancelled }
            }
        }
    }

    /// Runs `body` on a thread of the pool whether or not the calling task is cancelled, and returns its result or
    /// throws its error: for blocking work that must not be skipped half-way through what its caller does (the
    /// store's reads and writes under its lock: a refresh's rotated tokens are written back even after a Ctrl-C).
    package static func runIgnoringCancellation<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws
        -> T
    {
        if CallerThreadExecutor.isRunningHere { return try body() }
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            pool.submit { continuation.resume(with: Result { try body() }) }
        }
    }

    /// Starts `body` on a new thread that nobody waits for (a child process's reaper, a reader feeding a stream).
    package static func detach(name: String = "PortalAuth.blocking", _ body: @escaping @Sendable () -> Void) {
        let thread = Thread(block: body)
        thread.name = name
        thread.start()
    }

    /// The threads the pool has started so far (never more than ``poolSize``).
    package static var poolThreadCount: Int { pool.startedThreads }
}

/// A fixed-size pool of threads taking jobs from one queue; threads start as jobs need them.
private final class ThreadPool: @unchecked Sendable {
    // @unchecked: every stored var is read and written with `condition` locked.
    private let condition = NSCondition()
    private var queue: [@Sendable () -> Void] = []
    private var head = 0
    private var idle = 0
    private var started = 0
    private let size: Int
    private let name: String

    init(size: Int, name: String) {
        self.size = size
        self.name = name
    }

    var startedThreads: Int {
        condition.lock()
        defer { condition.unlock() }
        return started
    }

    /// Queues `job`; starts a thread when more jobs wait than threads are idle and the pool is not full.
    func submit(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        queue.append(job)
        let startThread = queue.count - head > idle && started < size
        if startThread { started += 1 } else { condition.signal() }
        condition.unlock()
        if startThread {
            let thread = Thread { [self] in work() }
            thread.name = name
            thread.start()
        }
    }

    private func work() {
        _ = pa_set_thread_name(name)  // the kernel keeps 15 bytes
        condition.lock()
        while true {
            while head == queue.count {
                idle += 1
                condition.wait()
                idle -= 1
            }
            let job = queue[head]
            head += 1
            if head == queue.count {
                queue.removeAll(keepingCapacity: true)
                head = 0
            }
            condition.unlock()
            job()
            condition.lock()
        }
    }
}
