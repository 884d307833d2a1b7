internal import CPortalAuthSystem
import Glibc
import Synchronization

/// Turns signals into calls on a thread of its own, without Dispatch: the signal handler (C, in CPortalAuthSystem) only
/// writes the signal's number to a pipe, and one thread, started with the first forwarder of the process, reads
/// the pipe and calls the handlers registered then.
///
/// Dispatch's signal sources cost `portal-auth refresh` a tenth of its time (their manager and worker threads,
/// and tearing them down before exit; issue 17). While at least one forwarder lives, its signals are caught (a
/// signal that was ignored when the first forwarder started, as under `nohup`, stays ignored) and the ignored
/// ones ignored; when the last one goes, the actions from before come back. Forwarders may nest: all the living
/// ones are called, and the signals are the first forwarder's.
package final class SignalForwarder: Sendable {
    /// The handlers of the living forwarders, the signals changed for them, and whether the reader runs.
    ///
    /// The handlers are a list, not a dictionary: a dictionary keyed by `ObjectIdentifier` has the runtime look up
    /// its `Hashable` conformance on first use, a scan of every conformance in the binary (about 0.15 ms of every
    /// `portal-auth refresh`, perf), for the one or two forwarders a process has.
    private struct State {
        var handlers: [(owner: ObjectIdentifier, handler: @Sendable (Int32) -> Void)] = []
        var changed: [Int32] = []
        var readDescriptor: Int32 = -1
    }

    private static let state = Mutex(State())

    /// Starts calling `handler` (on the reader thread, once per signal) for each of `forwarded` that arrives,
    /// and ignores `ignored` meanwhile.
    ///
    /// - Throws: `SystemError` when the pipe or the reader cannot be set up (the process then keeps its
    ///   signals' actions).
    package init(
        forwarding forwarded: [Int32], ignoring ignored: [Int32], _ handler: @escaping @Sendable (Int32) -> Void
    ) throws {
        let identifier = ObjectIdentifier(self)
        try Self.state.withLock { state throws(SystemError) in
            if state.readDescriptor < 0 {
                var ends: [Int32] = [-1, -1]
                guard pa_pipe2(&ends, O_CLOEXEC) == 0 else { throw SystemError(call: "pipe2", errno: errno) }
                _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
                pa_signal_set_pipe(ends[1])
                state.readDescriptor = ends[0]
                let descriptor = ends[0]
                BlockingWork.detach(name: "PortalAuth.signals") { Self.read(descriptor) }
            }
            if state.handlers.isEmpty {
                for number in forwarded where pa_signal_forward(number) == 1 { state.changed.append(number) }
                for number in ignored where pa_signal_ignore(number) == 0 { state.changed.append(number) }
            }
            state.handlers.append((identifier, handler))
        }
    }

    deinit {
        let identifier = ObjectIdentifier(self)
        Self.state.withLock { state in
            state.handlers.removeAll { $0.owner == identifier }
            guard state.handlers.isEmpty else { return }
            for number in state.changed.reversed() { _ = pa_signal_restore(number) }
            state.changed = []
        }
    }

    /// The reader: one byte per signal, for the life of the process.
    private static func read(_ descriptor: Int32) {
        var byte: UInt8 = 0
        while true {
            let count = Glibc.read(descriptor, &byte, 1)
            if count == 1 {
                let handlers = state.withLock { $0.handlers.map(\.handler) }
                for handler in handlers { handler(Int32(byte)) }
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                return
            }
        }
    }
}
