import Dispatch
import Glibc

/// Turns the signals that would end the tool into a call, so that the running work is cancelled instead of
/// killed: a sign-in frees its loopback port, and a refresh whose request has left still stores the rotated
/// refresh token before the tool exits with status 130.
///
/// Watched: Ctrl-C (SIGINT), SIGTERM, the terminal closing (SIGHUP), Ctrl-\ (SIGQUIT) and SIGUSR1/SIGUSR2,
/// whose default action would also end the process. SIGPIPE is ignored meanwhile without cancelling anything:
/// a reader that went away makes a write fail with `EPIPE` instead of killing a refresh half-way. Only
/// SIGKILL (and SIGSTOP) cannot be caught.
final class InterruptWatcher {
    /// The signals that cancel the work.
    static let cancelling: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2]

    private let sources: [any DispatchSourceSignal]

    /// Starts watching; `handler` runs once per signal on a background queue.
    init(_ handler: @escaping @Sendable () -> Void) {
        signal(SIGPIPE, SIG_IGN)
        sources = Self.cancelling.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler(handler: handler)
            source.resume()
            return source
        }
    }

    deinit {
        sources.forEach { $0.cancel() }
        for number in Self.cancelling + [SIGPIPE] { signal(number, SIG_DFL) }
    }
}
