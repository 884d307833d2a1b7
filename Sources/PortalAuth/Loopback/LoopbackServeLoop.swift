import Foundation
import Glibc
import Logging
import PortalAuthCore

/// The `poll()` loop of one wait, run on the listener's own thread (never on the Swift cooperative pool).
///
/// It polls the wake pipe, the listening sockets and every client, answers each request from its head alone, and
/// keeps every client within bounds: a head of at most `maximumHeadBytes`, a life of at most `connectionTimeout`,
/// at most `maximumConnections` at once. When the awaited response arrives it stops accepting, closes the listening
/// sockets and every other client, sends the page, and ends.
///
/// A flood of local connections (silent ones, unfinished request lines) cannot cut the browser off:
/// - the kernel hands a connection over only once it has sent something (`TCP_DEFER_ACCEPT`), so silent ones wait
///   there and the browser's arrives with its request;
/// - every connection is accepted as soon as it is pending and read at once, so a request already there is answered
///   before anything can push it out;
/// - room under the cap is made only by closing a connection already answered, or one that has not sent a complete
///   request line and is older than ``evictionGrace``, oldest first, each read a last time first; a connection with a
///   complete request line is never closed to make room;
/// - when nothing may be closed, the new connection is the one closed (its answer, if it had a request, already sent).
final class LoopbackServeLoop {
    /// What one wait needs to know.
    struct Settings: Sendable {
        let evaluator: CallbackEvaluator
        let configuration: LoopbackListener.Configuration
        /// The redirect URL with its real port, for messages.
        let redirectURL: String
        /// The wait's own limit, if any, and when it runs out.
        let timeout: Duration?
        let deadline: ContinuousClock.Instant?
    }

    typealias Outcome = LoopbackControl.Outcome

    /// How long a connection may take to read its page and close once it is answered.
    private static let lingerTime = Duration.seconds(1)
    /// How much a client may still send after its answer before it is cut off (read and discarded, never kept:
    /// closing with unread bytes would reset the connection and could destroy the answer before it is read).
    private static let lingerBytes = 4 << 20
    /// How many connections one pass accepts before the clients already connected are read again.
    private static let acceptBatch = 32
    /// How long accepting pauses when the process is out of descriptors and nothing can be evicted.
    private static let acceptPause = Duration.milliseconds(100)
    /// How long a connection is kept, whatever comes after it, before it may be closed to make room: time for a
    /// browser whose connection was handed over before its request (the kernel defers, but not for ever) to send it.
    static let evictionGrace = Duration.seconds(1)

    private let control: LoopbackControl
    private let settings: Settings
    private let logger: Logger
    private let clock = ContinuousClock()
    private var connections: [LoopbackConnection] = []
    private var accepting = true
    private var acceptResumesAt: ContinuousClock.Instant?
    private var decided: Outcome?
    private var scratch = [UInt8](repeating: 0, count: 16 * 1024)
    private(set) var statistics = LoopbackStatistics()

    init(control: LoopbackControl, settings: Settings, logger: Logger) {
        self.control = control
        self.settings = settings
        self.logger = logger
    }

    /// Serves until the wait ends, then closes every client socket (the listening sockets and the wake pipe are
    /// closed by `LoopbackControl.finish`).
    func run() -> Outcome {
        let outcome = serve()
        for index in connections.indices { close(index) }
        connections.removeAll()
        return outcome
    }

    // MARK: - The loop

    private func serve() -> Outcome {
        while true {
            var now = clock.now
            if let resume = acceptResumesAt, now >= resume { acceptResumesAt = nil }
            let polledListeners = accepting && acceptResumesAt == nil ? control.listeners : []
            var descriptors = [pollfd(fd: control.wakeReader, events: Int16(POLLIN), revents: 0)]
            descriptors += polledListeners.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            descriptors += connections.map { pollfd(fd: $0.fd, events: $0.events, revents: 0) }

            let timeout = pollTimeout(now: now)
            do throws(SystemError) {
                try syscall("poll") { poll(&descriptors, nfds_t(descriptors.count), timeout) }
            } catch {
                return .failure(.listenerFailed("\(error)"))
            }
            now = clock.now

            if descriptors[0].revents != 0 {
                drainWakePipe()
                if let request = control.stopRequest {
                    logger.debug("loopback listener stopping", metadata: ["reason": "\(request)"])
                    if let decided { return decided }
                    return .failure(
                        request == .cancel
                            ? .cancelled(redirectURL: settings.redirectURL) : .closed(redirectURL: settings.redirectURL)
                    )
                }
            }

            let firstClient = 1 + polledListeners.count
            for index in connections.indices where descriptors[firstClient + index].revents != 0 {
                service(index, now: now)
            }
            expire(now: now)
            connections.removeAll { $0.fd < 0 }

            for (offset, listener) in polledListeners.enumerated()
            where accepting && descriptors[1 + offset].revents != 0 {
                if let failure = acceptAll(from: listener, now: now) { return .failure(failure) }
            }

            if let decided, !connections.contains(where: \.isFinal) { return decided }
            if decided == nil, let deadline = settings.deadline, now >= deadline, let timeout = settings.timeout {
                logger.debug("loopback listener timed out")
                return .failure(.timedOut(redirectURL: settings.redirectURL, after: timeout))
            }
        }
    }

    /// Milliseconds until the nearest deadline (rounded up), or -1 for none.
    private func pollTimeout(now: ContinuousClock.Instant) -> Int32 {
        var nearest = connections.map(\.deadline).min()
        for candidate in [decided == nil ? settings.deadline : nil, acceptResumesAt].compactMap({ $0 }) {
            nearest = min(nearest ?? candidate, candidate)
        }
        guard let nearest else { return -1 }
        let (seconds, attoseconds) = (nearest - now).components
        guard seconds >= 0, attoseconds >= 0 || seconds > 0 else { return 0 }
        let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: max(milliseconds, 0))
    }

    private func drainWakePipe() {
        while read(control.wakeReader, &scratch, 64) > 0 {}
    }

    // MARK: - Accepting

    /// Accepts what is pending on `listener`; an error only when the listening socket itself is broken.
    private func acceptAll(from listener: Int32, now: ContinuousClock.Instant) -> LoopbackError? {
        for _ in 0..<Self.acceptBatch {
            // A request read while making room may have ended the wait (and closed the listening sockets).
            guard accepting else { return nil }
            let fd: Int32
            do throws(SystemError) {
                guard let accepted = try LoopbackSocket.accept(listener) else { return nil }
                fd = accepted
            } catch {
                switch error.errno {
                case ECONNABORTED, EPROTO, EPERM, ENETDOWN, ENOPROTOOPT, EHOSTDOWN, ENONET, EHOSTUNREACH, EOPNOTSUPP,
                    ENETUNREACH:
                    continue  // That client is gone; others may be pending.
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    logger.debug(
                        "loopback listener out of descriptors or memory", metadata: ["errno": "\(error.errno)"])
                    if evictOne(now: now, sparing: nil) { continue }
                    acceptResumesAt = now + Self.acceptPause
                    return nil
                default:
                    return .listenerFailed("\(error)")
                }
            }
            connections.append(
                LoopbackConnection(fd: fd, acceptedAt: now, deadline: now + settings.configuration.connectionTimeout))
            statistics.accepted += 1
            // Read at once: a request already there (the browser's, which the kernel hands over with its request) is
            // answered before anything can push it out.
            readHead(connections.count - 1, now: now)
            guard accepting else { return nil }  // That request ended the wait; every other client is closed.
            if connections[connections.count - 1].fd < 0 {
                connections.removeLast()  // It went away, or got its answer and was let go.
                continue
            }
            if connections.count > settings.configuration.maximumConnections
                && !evictOne(now: now, sparing: connections[connections.count - 1].fd)
            {
                guard accepting else { return nil }
                // Nothing may be closed to make room: the newcomer goes (its page, if it asked, is already sent).
                close(connections.count - 1)
                connections.removeLast()
                statistics.evicted += 1
                continue
            }
            guard accepting else { return nil }
            statistics.peakConnections = max(statistics.peakConnections, connections.count)
        }
        return nil
    }

    /// Closes one connection to make room, never `spared` (the newcomer); false when none may be closed.
    ///
    /// First one already answered (draining), then the oldest that is still sending its head without a complete
    /// request line and is older than ``evictionGrace``. A candidate still reading is read a last time first, so a
    /// request that arrived since the last poll is answered (the sign-in goes on) rather than cut off.
    private func evictOne(now: ContinuousClock.Instant, sparing spared: Int32?) -> Bool {
        while true {
            guard let victim = evictionCandidate(now: now, sparing: spared) else { return false }
            if connections[victim].stage == .reading {
                readHead(victim, now: now)
                if decided != nil { return true }  // The wait ended: every other client is closed.
                if connections[victim].fd < 0 {
                    connections.remove(at: victim)  // It went away.
                    return true
                }
                if connections[victim].stage != .reading || connections[victim].hasRequestLine {
                    statistics.rescuedFromEviction += 1
                    continue  // It has spoken: choose again.
                }
            }
            close(victim)
            connections.remove(at: victim)
            statistics.evicted += 1
            return true
        }
    }

    /// The connection to close first (see `evictOne(now:sparing:)`), without reading it; nil when none may go.
    private func evictionCandidate(now: ContinuousClock.Instant, sparing spared: Int32?) -> Int? {
        let candidates = connections.indices.filter {
            connections[$0].fd >= 0 && connections[$0].fd != spared && !connections[$0].isFinal
        }
        let byAge = { (first: Int, second: Int) in
            self.connections[first].acceptedAt < self.connections[second].acceptedAt
        }
        if let answered = candidates.filter({ connections[$0].stage == .draining }).min(by: byAge) { return answered }
        return candidates.filter {
            connections[$0].stage == .reading && !connections[$0].hasRequestLine
                && now - connections[$0].acceptedAt >= Self.evictionGrace
        }.min(by: byAge)
    }

    // MARK: - Serving a client

    private func service(_ index: Int, now: ContinuousClock.Instant) {
        guard connections[index].fd >= 0 else { return }
        switch connections[index].stage {
        case .reading: readHead(index, now: now)
        case .writing: flush(index, now: now)
        case .draining: drain(index)
        }
    }

    private func readHead(_ index: Int, now: ContinuousClock.Instant) {
        let limit = settings.configuration.maximumHeadBytes
        while true {
            let room = limit - connections[index].head.count
            guard room > 0 else {
                logger.debug("loopback request head too large")
                respond(index, page: .headTooLarge, headOnly: false, final: nil, now: now)
                return
            }
            let count: Int
            do throws(SystemError) {
                count = try syscall("read") { read(connections[index].fd, &scratch, min(room, scratch.count)) }
            } catch {
                if error.errno != EAGAIN && error.errno != EWOULDBLOCK { close(index) }
                return
            }
            guard count > 0 else {
                close(index)  // The client went away before finishing its request.
                return
            }
            connections[index].head += scratch[..<count]
            if !connections[index].hasRequestLine, scratch[..<count].contains(UInt8(ascii: "\n")) {
                connections[index].hasRequestLine = true
            }
            statistics.peakHeadBytes = max(statistics.peakHeadBytes, connections[index].head.count)
            if let end = HTTPRequestHead.endOfHead(in: connections[index].head, from: connections[index].scanned - 2) {
                answer(index, head: connections[index].head[..<end], now: now)
                return
            }
            connections[index].scanned = connections[index].head.count
        }
    }

    /// Decides the response from a complete head.
    private func answer(_ index: Int, head bytes: ArraySlice<UInt8>, now: ContinuousClock.Instant) {
        let request: HTTPRequestHead
        do throws(HTTPRequestHead.ParseError) {
            request = try HTTPRequestHead.parse(bytes)
        } catch {
            switch error {
            case .unsupportedVersion:
                respond(index, page: .versionNotSupported, headOnly: false, final: nil, now: now)
            case .malformed(let reason):
                logger.debug("loopback request malformed", metadata: ["reason": "\(reason)"])
                respond(index, page: .badRequest(reason), headOnly: false, final: nil, now: now)
            }
            return
        }
        let headOnly = request.method == "HEAD"
        if let host = request.header("Host"), !LoopbackEndpoint.isLoopbackHostHeader(host) {
            respond(index, page: .wrongHost, headOnly: headOnly, final: nil, now: now)
            return
        }
        guard request.method == "GET" || headOnly else {
            respond(index, page: .methodNotAllowed, headOnly: false, final: nil, now: now)
            return
        }
        // The query holds secrets: only the kind of outcome is logged.
        switch settings.evaluator.evaluate(target: request.target) {
        case .notFound:
            respond(index, page: .notFound, headOnly: headOnly, final: nil, now: now)
        case .unknownState(let reason):
            logger.debug("loopback callback with a state of no pending sign-in", metadata: ["reason": "\(reason)"])
            respond(index, page: .unknownState(reason), headOnly: headOnly, final: nil, now: now)
        case .malformed(let reason):
            logger.debug("loopback callback unreadable", metadata: ["reason": "\(reason)"])
            respond(index, page: .malformedCallback(reason), headOnly: headOnly, final: nil, now: now)
        case .refused(let error):
            logger.debug("loopback callback refused", metadata: ["kind": "\(error.kind)"])
            respond(
                index, page: .failure(error, nextStep: settings.configuration.failureNextStep), headOnly: headOnly,
                final: headOnly ? nil : .failure(error), now: now)
        case .accepted(let callback):
            logger.debug("loopback callback accepted")
            let configuration = settings.configuration
            respond(
                index, page: .success(title: configuration.successTitle, message: configuration.successMessage),
                headOnly: headOnly, final: headOnly ? nil : .success(callback), now: now)
        }
    }

    /// Queues the page and starts writing it; a final outcome ends accepting and drops every other client.
    private func respond(
        _ index: Int, page: CallbackPage, headOnly: Bool, final outcome: Outcome?, now: ContinuousClock.Instant
    ) {
        statistics.answered += 1
        logger.debug("loopback answered", metadata: ["status": "\(page.status.rawValue)"])
        connections[index].head = []
        connections[index].output = page.response(headOnly: headOnly).bytes
        connections[index].stage = .writing
        if let outcome, decided == nil {
            decided = outcome
            connections[index].isFinal = true
            connections[index].deadline = min(connections[index].deadline, now + Self.lingerTime)
            accepting = false
            control.closeListeners()
            for other in connections.indices where other != index { close(other) }
        }
        flush(index, now: now)
    }

    private func flush(_ index: Int, now: ContinuousClock.Instant) {
        let fd = connections[index].fd
        while connections[index].written < connections[index].output.count {
            let start = connections[index].written
            let written: Int
            do throws(SystemError) {
                written = try syscall("send") {
                    connections[index].output.withUnsafeBytes { buffer in
                        send(fd, buffer.baseAddress! + start, buffer.count - start, Int32(MSG_NOSIGNAL))
                    }
                }
            } catch {
                if error.errno != EAGAIN && error.errno != EWOULDBLOCK { close(index) }
                return
            }
            connections[index].written += written
        }
        connections[index].output = []
        shutdown(fd, Int32(SHUT_WR))
        if connections[index].isFinal {
            close(index)  // The browser sent its request and nothing more; the wait ends now.
        } else {
            connections[index].stage = .draining
            connections[index].deadline = min(connections[index].deadline, now + Self.lingerTime)
        }
    }

    /// Reads and discards until the client closes, or it has sent too much.
    private func drain(_ index: Int) {
        while true {
            let count = read(connections[index].fd, &scratch, scratch.count)
            if count > 0 {
                connections[index].discarded += count
                if connections[index].discarded > Self.lingerBytes { break }
                continue
            }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { return }
            break  // End of stream or an error.
        }
        close(index)
    }

    // MARK: - Closing

    private func expire(now: ContinuousClock.Instant) {
        for index in connections.indices where connections[index].fd >= 0 && now >= connections[index].deadline {
            if connections[index].stage == .reading { statistics.timedOut += 1 }
            close(index)
        }
    }

    /// Closes a client socket; the entry is removed after the current pass.
    private func close(_ index: Int) {
        guard connections[index].fd >= 0 else { return }
        Glibc.close(connections[index].fd)
        connections[index].fd = -1
        connections[index].isFinal = false
        connections[index].head = []
        connections[index].output = []
    }
}
