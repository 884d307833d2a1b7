import Dispatch
import Glibc

/// Turns the signals that would end the tool into a call, so that the running work is cancelled instead of
/// killed: a sign-in frees its loopback port, and a refresh whose request has left still stores the rotated
/// refresh token before the tool exits with status 130.
///
/// Watched: Ctrl-C (SIGINT), SIGTERM, the terminal closing (SIGHUP), Ctrl-\ (SIGQUIT), SIGUSR1, SIGUSR2 and
/// SIGALRM, whose default action would also end the process. SIGPIPE and SIGXFSZ are ignored meanwhile without
/// cancelling anything: a reader that went away, or a file-size limit, makes a write fail (`EPIPE`, `EFBIG`)
/// instead of killing a refresh half-way. A signal the tool was started with ignored (`nohup`) stays ignored.
/// Only SIGKILL (and SIGSTOP) cannot be caught. The previous dispositions come back when the watcher goes.
final class InterruptWatcher {
    /// The signals that cancel the work.
    static let cancelling: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM]
    /// The signals ignored while the work runs.
    static let ignored: [Int32] = [SIGPIPE, SIGXFSZ]

    private let sources: [any DispatchSourceSignal]
    private let previous: [(Int32, __sighandler_t?)]

    /// Starts watching; `handler` runs once per signal on a background queue.
    init(_ handler: @escaping @Sendable () -> Void) {
        var sources: [any DispatchSourceSignal] = []
        var previous: [(Int32, __sighandler_t?)] = []
        for number in Self.cancelling + Self.ignored {
            let old = signal(number, SIG_IGN)
            previous.append((number, old))
            guard Self.cancelling.contains(number), !Self.isIgnore(old) else { continue }
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler(handler: handler)
            source.resume()
            sources.append(source)
        }
        self.sources = sources
        self.previous = previous
    }

    deinit {
        sources.forEach { $0.cancel() }
        for (number, old) in previous { signal(number, old) }
    }

    /// Whether a disposition is `SIG_IGN`.
    private static func isIgnore(_ handler: __sighandler_t?) -> Bool {
        guard let handler else { return false }
        return unsafeBitCast(handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
    }
}
