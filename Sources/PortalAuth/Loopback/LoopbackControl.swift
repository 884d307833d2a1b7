import Glibc
import Synchronization

/// What the waiting task, the cancellation handler, `close()` and the serving thread share, under one lock.
///
/// Ownership of the descriptors: before the wait starts and after it ends, whoever holds the lock may close them;
/// while the serving thread runs, it alone closes the listening sockets and its client sockets, and the wake pipe is
/// written and closed only under the lock, so no descriptor is used after it is closed (or reused by another file).
final class LoopbackControl: Sendable {
    /// Why the serving loop was asked to stop.
    enum StopRequest: Sendable, Equatable {
        /// The waiting task was cancelled.
        case cancel
        /// `close()` was called.
        case close
    }

    typealias Outcome = Result<LoopbackCallback, LoopbackError>

    private enum Phase {
        /// Bound, nobody waiting yet.
        case bound
        /// The serving loop runs (or is about to start on its thread).
        case waiting
        /// Ended (or closed); every descriptor is closed.
        case finished
    }

    private struct State {
        var phase: Phase = .bound
        var stopRequest: StopRequest?
        var listenersClosed = false
        var pipeClosed = false
    }

    /// The listening sockets (one, or two for `localhost`).
    let listeners: [Int32]
    /// The read end of the wake pipe, polled by the serving loop.
    let wakeReader: Int32
    private let wakeWriter: Int32
    private let state = Mutex(State())

    init(listeners: [Int32], wakeReader: Int32, wakeWriter: Int32) {
        self.listeners = listeners
        self.wakeReader = wakeReader
        self.wakeWriter = wakeWriter
    }

    // MARK: - Waiting

    /// Starts waiting: nil when the caller must start the serving loop, otherwise the wait's outcome at once (the
    /// task was cancelled before the start, or the listener has ended).
    ///
    /// Called on the waiting task. `Task.isCancelled` is read under the lock: the cancellation handler takes the
    /// same lock after the flag is set, so either it finds the wait started and wakes the loop, or this sees the flag.
    func begin(closedError: LoopbackError, cancelledError: LoopbackError) -> Outcome? {
        let immediate: Outcome? = state.withLock { state in
            switch state.phase {
            case .bound where Task.isCancelled:
                closeAll(&state)
                state.phase = .finished
                return .failure(cancelledError)
            case .bound:
                state.phase = .waiting
                return nil
            case .waiting:
                return .failure(.listenerFailed("waitForCallback was called while another call is waiting"))
            case .finished:
                return .failure(closedError)
            }
        }
        return immediate
    }

    /// Asks the serving loop to stop (or, before the wait starts, closes at once for `.close`).
    func requestStop(_ request: StopRequest) {
        state.withLock { state in
            switch state.phase {
            case .bound:
                // A cancellation before the start is seen by `begin` through `Task.isCancelled`.
                guard request == .close else { return }
                closeAll(&state)
                state.phase = .finished
            case .waiting:
                if state.stopRequest == nil { state.stopRequest = request }
                if !state.pipeClosed {
                    var byte: UInt8 = 1
                    _ = write(wakeWriter, &byte, 1)  // A full pipe already wakes the loop.
                }
            case .finished:
                return
            }
        }
    }

    /// The pending stop request, read by the serving loop after a wake-up.
    var stopRequest: StopRequest? { state.withLock { $0.stopRequest } }

    // MARK: - Ending

    /// Closes the listening sockets (the port is free from here on); called by the serving thread.
    func closeListeners() {
        state.withLock { state in closeListeners(&state) }
    }

    /// Ends the wait: closes what is left; the waiting task then gets the outcome.
    func finish() {
        state.withLock { state in
            closeAll(&state)
            state.phase = .finished
        }
    }

    // MARK: - Closing

    private func closeListeners(_ state: inout State) {
        guard !state.listenersClosed else { return }
        state.listenersClosed = true
        for fd in listeners { Glibc.close(fd) }
    }

    private func closeAll(_ state: inout State) {
        closeListeners(&state)
        guard !state.pipeClosed else { return }
        state.pipeClosed = true
        Glibc.close(wakeReader)
        Glibc.close(wakeWriter)
    }
}
