import Glibc
import PortalAuth

/// Turns the signals that would end the tool into a call, so that the running work is cancelled instead of
/// killed: a sign-in frees its loopback port, and a refresh whose request has left still stores the rotated
/// refresh token before the tool exits with status 130.
///
/// Watched: Ctrl-C (SIGINT), SIGTERM, the terminal closing (SIGHUP), Ctrl-\ (SIGQUIT), SIGUSR1, SIGUSR2 and
/// SIGALRM, whose default action would also end the process. SIGPIPE and SIGXFSZ are ignored meanwhile without
/// cancelling anything: a reader that went away, or a file-size limit, makes a write fail (`EPIPE`, `EFBIG`)
/// instead of killing a refresh half-way. A signal the tool was started with ignored (`nohup`) stays ignored.
/// Only SIGKILL (and SIGSTOP) cannot be caught. The previous actions come back when the watcher goes.
/// (Through `SignalForwarder`, not Dispatch's signal sources, whose threads cost `refresh` a tenth of its time.)
final class InterruptWatcher {
    /// The signals that cancel the work.
    static let cancelling: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM]
    /// The signals ignored while the work runs.
    static let ignored: [Int32] = [SIGPIPE, SIGXFSZ]

    private let forwarder: SignalForwarder?

    /// Starts watching; `handler` runs once per signal on a thread of its own. When the watching cannot be set
    /// up (no descriptor left for its pipe), a warning says so and the signals keep their default actions.
    init(_ handler: @escaping @Sendable () -> Void) {
        do {
            forwarder = try SignalForwarder(forwarding: Self.cancelling, ignoring: Self.ignored) { _ in handler() }
        } catch {
            StandardError.line("portal-auth: warning: Ctrl-C will end the tool at once (\(error))")
            forwarder = nil
        }
    }

    deinit { withExtendedLifetime(forwarder) {} }
}
