import Foundation
import Glibc
package import Logging
package import PortalAuthCore
import Synchronization

/// Serves the agent's protocol on a listening socket: one thread waits on every connection with `poll`; each request
/// is answered by the handler in a task of its own, so a slow refresh holds up no other caller — unless the
/// immediate handler answers it first, on the serving thread (a token kept in memory: a few `stat` calls), which
/// spares the request two thread switches, each a wait for a processor when the machine is busy.
///
/// Every connection's peer is checked with `SO_PEERCRED` (another user's is refused), a request line is bounded
/// (`AgentProtocol.maximumRequestBytes`), so is the number of connections served at once (`Limits`), and a
/// connection with nothing in progress that sends nothing for `Limits.idleTimeout` is closed.
package final class AgentServer: Sendable {
    /// Answers one token request; `peer` is who asked (`status` and `stop` the server answers itself).
    package typealias Handler = @Sendable (AgentRequest, PeerCredentials) async -> AgentAnswer
    /// Answers a token request at once, without blocking, when it can (nil: the `Handler` answers it).
    package typealias ImmediateHandler = @Sendable (AgentRequest, PeerCredentials) -> AgentAnswer?

    /// The bounds of the server.
    package struct Limits: Sendable {
        /// Connections served at once; one more is answered `busy` and closed.
        package var maximumConnections = 128
        /// A connection with no request in progress that sends nothing for this long is closed.
        package var idleTimeout: Duration = .seconds(30)
        /// The longest request line.
        package var maximumRequestBytes = AgentProtocol.maximumRequestBytes
        /// How long `run()` waits, once serving has stopped, for requests in progress (a refresh already sent, whose
        /// rotated refresh token must be stored) before it returns.
        package var drainTimeout: Duration = .seconds(60)

        package init() {}
    }

    /// Which socket the server answers on: what a request there may ask.
    package enum Role: Sendable, Equatable {
        /// The agent's own socket: `token`, `status` and `stop`.
        case main
        /// The socket meant for `ssh -R`: `token` (the handler applies the forwarding rules) and a `status` that
        /// says only the protocol and version; `stop` is refused (`forbidden`): a remote machine cannot stop the agent.
        case forward
    }

    /// What `status` reports of the serving.
    package struct Counts: Sendable {
        package var open = 0
        package var answered = 0
        package var refusedUsers = 0
        package var refusedBusy = 0
    }

    private struct Connection {
        let fd: Int32
        let peer: PeerCredentials
        var input: [UInt8] = []
        var output: [UInt8] = []
        var deadline: ContinuousClock.Instant
        var busy = false
        var closeAfterWrite = false
    }

    private struct Shared {
        var stopRequested = false
        var answers: [(fd: Int32, serial: UInt64, answer: AgentAnswer)] = []
        var counts = Counts()
        /// Requests whose handler is still running.
        var inProgress = 0
    }

    private let listener: Int32
    private let wakeReader: Int32
    private let wakeWriter: Int32
    private let limits: Limits
    private let handler: Handler
    private let immediate: ImmediateHandler?
    private let peerCredentials: @Sendable (Int32) throws -> PeerCredentials
    private let allowedUID: UInt32
    private let logger: Logger
    private let details: JSONObject
    private let role: Role
    private let statusExtras: @Sendable () -> JSONObject
    private let shared = Mutex(Shared())

    /// Serves on `listener` (a listening, nonblocking Unix socket the caller keeps open while `run()` runs);
    /// `details` start the `"agent"` object of status answers (the version, the socket) and `statusExtras` end it
    /// (asked at each `status`: the forwarding socket's counts).
    package init(
        listener: Int32, role: Role = .main, details: JSONObject = [:],
        statusExtras: @escaping @Sendable () -> JSONObject = { [:] }, limits: Limits = Limits(),
        allowedUID: UInt32 = getuid(),
        peerCredentials: @escaping @Sendable (Int32) throws -> PeerCredentials = { try PeerCredentials.of($0) },
        logger: Logger = Logger(label: "PortalAuth.agent", factory: { _ in SwiftLogNoOpLogHandler() }),
        immediate: ImmediateHandler? = nil,
        handler: @escaping Handler
    ) throws(SystemError) {
        self.listener = listener
        self.details = details
        self.role = role
        self.statusExtras = statusExtras
        self.limits = limits
        self.allowedUID = allowedUID
        self.peerCredentials = peerCredentials
        self.logger = logger
        self.handler = handler
        self.immediate = immediate
        (wakeReader, wakeWriter) = try LoopbackSocket.makeWakePipe()
    }

    deinit {
        Glibc.close(wakeReader)
        Glibc.close(wakeWriter)
    }

    /// The counts so far.
    package var counts: Counts { shared.withLock { $0.counts } }

    /// Serves until `stop()`, a `stop` request (once its answer is written) or the task's cancellation; then waits
    /// up to `Limits.drainTimeout` for the requests in progress to end (their answers are dropped), so that a
    /// refresh already sent has its tokens stored before the process goes.
    package func run() async throws {
        do {
            try await withTaskCancellationHandler {
                try await BlockingWork.run(name: "PortalAuth.agent", dedicatedThread: true) { [self] in try serve() }
            } onCancel: {
                stop()
            }
        } catch {
            await drain()
            throw error
        }
        await drain()
    }

    /// Waits, on a thread of its own and whether or not the task is cancelled, until no request is in progress or
    /// `Limits.drainTimeout` has passed.
    private func drain() async {
        guard shared.withLock({ $0.inProgress }) > 0 else { return }
        let deadline = ContinuousClock.now + limits.drainTimeout
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            BlockingWork.detach(name: "PortalAuth.agent-drain") { [self] in
                while shared.withLock({ $0.inProgress }) > 0 && ContinuousClock.now < deadline {
                    usleep(10_000)
                }
                continuation.resume()
            }
        }
    }

    /// Ends `run()`: connections are closed, answers in progress dropped. Idempotent.
    package func stop() {
        shared.withLock { $0.stopRequested = true }
        wake()
    }

    private func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWriter, &byte, 1)
    }

    // MARK: - The loop (on the server's thread)

    private func serve() throws {
        // A request is answered as soon as it arrives, not after the slices of the processes running meanwhile (the
        // callers themselves, on a busy machine).
        TimeSlice.requestShort()
        var connections: [Int32: Connection] = [:]
        // A connection's serial: an answer for a connection closed (and its number reused) meanwhile is dropped.
        var serials: [Int32: UInt64] = [:]
        var nextSerial: UInt64 = 0
        var stopAfterWrite = false
        defer {
            for fd in connections.keys { Glibc.close(fd) }
            shared.withLock { $0.counts.open = 0 }
        }
        func close(_ fd: Int32) {
            connections[fd] = nil
            serials[fd] = nil
            Glibc.close(fd)
        }
        /// Sends what `connection` has to send, as much as the socket takes; false when it was closed (failed, or
        /// done with its last answer).
        func send(_ connection: inout Connection) -> Bool {
            let written = connection.output.withUnsafeBytes {
                Glibc.send(connection.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if written > 0 {
                connection.output.removeFirst(written)
            } else if written < 0 && errno != EAGAIN && errno != EINTR {
                close(connection.fd)
                return false
            }
            if connection.output.isEmpty && connection.closeAfterWrite {
                close(connection.fd)
                return false
            }
            return true
        }
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            if shared.withLock({ $0.stopRequested }) { return }
            if stopAfterWrite && connections.values.allSatisfy({ $0.output.isEmpty }) { return }
            shared.withLock { $0.counts.open = connections.count }
            var descriptors = [
                pollfd(fd: wakeReader, events: Int16(POLLIN), revents: 0),
                pollfd(fd: listener, events: stopAfterWrite ? 0 : Int16(POLLIN), revents: 0),
            ]
            let now = ContinuousClock.now
            var nearest: ContinuousClock.Instant?
            for connection in connections.values {
                var events: Int16 = 0
                if !connection.output.isEmpty { events |= Int16(POLLOUT) }
                // A client that sends requests and does not read the answers is read no further meanwhile.
                if !connection.busy && !connection.closeAfterWrite && connection.output.count < Self.unsentBound {
                    events |= Int16(POLLIN)
                }
                descriptors.append(pollfd(fd: connection.fd, events: events, revents: 0))
                if !connection.busy { nearest = min(nearest ?? connection.deadline, connection.deadline) }
            }
            var timeout: Int32 = -1
            if let nearest {
                let left = now.duration(to: nearest)
                let milliseconds = left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000
                timeout = Int32(min(Int64(Int32.max), max(0, milliseconds + 1)))
            }
            let ready = poll(&descriptors, nfds_t(descriptors.count), timeout)
            if ready < 0 {
                if errno == EINTR { continue }
                throw SystemError(call: "poll", errno: errno)
            }
            if descriptors[0].revents != 0 {
                var sink = [UInt8](repeating: 0, count: 64)
                _ = read(wakeReader, &sink, sink.count)
            }
            // Answers ready.
            let answered: [(fd: Int32, serial: UInt64, answer: AgentAnswer)] = shared.withLock { state in
                defer { state.answers = [] }
                return state.answers
            }
            for (fd, serial, answer) in answered {
                guard serials[fd] == serial, var connection = connections[fd] else { continue }
                connection.output += Array((answer.line + "\n").utf8)
                connection.busy = false
                connection.deadline = ContinuousClock.now + limits.idleTimeout
                if case .stopping = answer { stopAfterWrite = true }
                connections[fd] = connection
                shared.withLock { $0.counts.answered += 1 }
            }
            // New connections.
            if descriptors[1].revents != 0 {
                while let client = acceptOne() {
                    let peer: PeerCredentials
                    do {
                        peer = try peerCredentials(client)
                    } catch {
                        refuse(client, AgentFailure(.forbidden, "the agent cannot tell who is connecting"))
                        continue
                    }
                    guard peer.uid == allowedUID else {
                        logger.info(
                            "agent: connection of another user refused",
                            metadata: ["uid": "\(peer.uid)", "pid": "\(peer.pid)"])
                        shared.withLock { $0.counts.refusedUsers += 1 }
                        refuse(
                            client, AgentFailure(.forbidden, "this agent serves only its own user (uid \(allowedUID))"))
                        continue
                    }
                    guard connections.count < limits.maximumConnections else {
                        shared.withLock { $0.counts.refusedBusy += 1 }
                        refuse(
                            client,
                            AgentFailure(
                                .busy, "the agent serves \(limits.maximumConnections) connections already; try again"))
                        continue
                    }
                    nextSerial += 1
                    serials[client] = nextSerial
                    connections[client] = Connection(
                        fd: client, peer: peer, deadline: ContinuousClock.now + limits.idleTimeout)
                }
            }
            // Reading and writing.
            for descriptor in descriptors.dropFirst(2) where descriptor.revents != 0 {
                guard var connection = connections[descriptor.fd] else { continue }
                if descriptor.revents & Int16(POLLOUT) != 0 {
                    guard send(&connection) else { continue }
                }
                if descriptor.revents & Int16(POLLIN) != 0 {
                    let count = read(connection.fd, &buffer, buffer.count)
                    if count < 0 && (errno == EAGAIN || errno == EINTR) {
                        connections[connection.fd] = connection
                        continue
                    }
                    guard count > 0 else {
                        close(connection.fd)
                        continue
                    }
                    connection.input += buffer[0..<count]
                    connection.deadline = ContinuousClock.now + limits.idleTimeout
                } else if descriptor.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 && connection.output.isEmpty {
                    close(connection.fd)
                    continue
                }
                connections[connection.fd] = connection
            }
            // Requests complete: one at a time per connection, in order (several in a round while kept tokens
            // answer them at once).
            for fd in Array(connections.keys) {
                lines: while true {
                    guard var connection = connections[fd], !connection.busy, !connection.closeAfterWrite,
                        connection.output.count < Self.unsentBound
                    else { break lines }
                    guard let newline = connection.input.firstIndex(of: 10) else {
                        if connection.input.count > limits.maximumRequestBytes {
                            connection.output += Array((tooLong.line + "\n").utf8)
                            connection.closeAfterWrite = true
                            connection.input = []
                            connections[fd] = connection
                        }
                        break lines
                    }
                    let bytes = connection.input[..<newline]
                    connection.input.removeSubrange(...newline)
                    let request: AgentRequest
                    do throws(AgentFailure) {
                        guard bytes.count <= limits.maximumRequestBytes else { throw tooLongFailure }
                        guard let text = String(validating: bytes, as: UTF8.self) else {
                            throw .badRequest("the request is not UTF-8")
                        }
                        request = try AgentRequest.parse(text)
                    } catch {
                        connection.output += Array((AgentAnswer.failure(error).line + "\n").utf8)
                        if error.reason == .tooLong { connection.closeAfterWrite = true }
                        connections[fd] = connection
                        break lines
                    }
                    // A token kept in memory: answered and sent now (what the socket does not take waits for POLLOUT).
                    if case .token = request, let answer = immediate?(request, connection.peer) {
                        connection.output += Array((answer.line + "\n").utf8)
                        connection.deadline = ContinuousClock.now + limits.idleTimeout
                        shared.withLock { $0.counts.answered += 1 }
                        guard send(&connection) else { break lines }
                        connections[fd] = connection
                        continue lines
                    }
                    connection.busy = true
                    connections[fd] = connection
                    let serial = serials[fd] ?? 0
                    let (handler, peer, role) = (self.handler, connection.peer, self.role)
                    shared.withLock { $0.inProgress += 1 }
                    Task { [self] in
                        let answer: AgentAnswer
                        switch (request, role) {
                        case (.stop, .main): answer = .stopping
                        case (.stop, .forward): answer = .failure(Self.stopForwarded)
                        case (.status, _): answer = .status(status())
                        case (.token, _): answer = await handler(request, peer)
                        }
                        shared.withLock {
                            $0.answers.append((fd, serial, answer))
                            $0.inProgress -= 1
                        }
                        wake()
                    }
                    break lines
                }
            }
            // Idle connections.
            let later = ContinuousClock.now
            for connection in connections.values where !connection.busy && connection.deadline <= later {
                logger.debug("agent: idle connection closed", metadata: ["pid": "\(connection.peer.pid)"])
                close(connection.fd)
            }
        }
    }

    /// The most answer bytes a connection may have unsent before the server stops reading its requests.
    static let unsentBound = 64 * 1024

    /// Why `stop` is refused on the forwarding socket.
    package static let stopForwarded = AgentFailure(
        .forbidden,
        "\"op\": \"stop\" is not served on the agent's forwarding socket: only the agent's own machine can stop it")

    /// The `"agent"` object of a status answer: the details given at creation, then the counts (on the forwarding
    /// socket, only the protocol and the details: nothing of the agent's process or of other callers).
    private func status() -> JSONObject {
        var object = details
        guard role == .main else {
            object["protocol"] = .integer(AgentProtocol.version)
            object["forwarding"] = .bool(true)
            return object
        }
        let counts = self.counts
        object["protocol"] = .integer(AgentProtocol.version)
        object["pid"] = .integer(Int64(getpid()))
        object["uid"] = .integer(Int64(allowedUID))
        object["connections"] = .integer(Int64(counts.open))
        object["answered"] = .integer(Int64(counts.answered))
        object["refused_other_users"] = .integer(Int64(counts.refusedUsers))
        object["refused_busy"] = .integer(Int64(counts.refusedBusy))
        for (key, value) in statusExtras().members { object[key] = value }
        return object
    }

    private var tooLongFailure: AgentFailure {
        AgentFailure(.tooLong, "the request is longer than \(limits.maximumRequestBytes) bytes")
    }

    private var tooLong: AgentAnswer { .failure(tooLongFailure) }

    /// One accepted connection (nonblocking, close-on-exec), or nil when none waits.
    private func acceptOne() -> Int32? {
        while true {
            do {
                return try LoopbackSocket.accept(listener)
            } catch  where error.errno == ECONNABORTED {
                continue
            } catch {
                logger.debug("agent: accept failed", metadata: ["error": "\(error)"])
                return nil
            }
        }
    }

    /// Answers `failure` without waiting (best effort) and closes.
    private func refuse(_ client: Int32, _ failure: AgentFailure) {
        let bytes = Array((AgentAnswer.failure(failure).line + "\n").utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        Glibc.close(client)
    }
}
