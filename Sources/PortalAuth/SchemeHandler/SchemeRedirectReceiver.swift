import Foundation
import Glibc
import Logging
import PortalAuthCore
import PortalAuthStore
import Synchronization

/// Waits for one sign-in's custom-scheme redirect (`my-maps-app://auth?code=…&state=…`) on a private Unix socket
/// in `$XDG_RUNTIME_DIR/portal-auth`, where the scheme's handler (``SchemeRedirectForwarder``) delivers it.
///
/// Only this user's processes get an answer (the kernel's `SO_PEERCRED`, checked for every connection, besides
/// the 0700 folder). Each forwarded address goes through the same ``CallbackEvaluator`` as the loopback listener:
/// state, `iss`, `error` and `code` rules unchanged; an address with another state (another sign-in's) is answered
/// "not this sign-in" and the wait goes on, so sign-ins waiting at once are told apart by their state.
final class SchemeRedirectReceiver: Sendable {
    /// Reads the peer of a connection; injected by tests (a wrong user cannot be faked otherwise).
    typealias PeerCredentialReader = @Sendable (Int32) throws -> PeerCredentials

    private typealias Outcome = Result<LoopbackCallback, any Error>

    private enum Phase {
        case idle
        case waiting
        case finished
    }

    private struct State {
        var phase: Phase = .idle
        var stopRequested = false
        var closed = false
    }

    /// The redirect this sign-in waits for.
    let redirect: CustomSchemeRedirect
    /// The socket's path; nil when the receiver only checks pasted addresses (no desktop session).
    let socketPath: String?

    private let listener: Int32
    private let wakeReader: Int32
    private let wakeWriter: Int32
    private let peerCredentials: PeerCredentialReader
    private let allowedUID: UInt32
    private let connectionTimeout: Duration
    private let logger: Logger
    private let state = Mutex(State())

    // MARK: - Life

    /// Binds a socket with a random name in `directory` (which must be private already; see
    /// ``RedirectChannelDirectory``), or none when `directory` is nil.
    init(
        redirect: CustomSchemeRedirect,
        directory: String?,
        peerCredentials: @escaping PeerCredentialReader = { try PeerCredentials.of($0) },
        allowedUID: UInt32 = getuid(),
        connectionTimeout: Duration = .seconds(5),
        logger: Logger = Logger(label: "PortalAuth.scheme", factory: { _ in SwiftLogNoOpLogHandler() })
    ) throws(SchemeRedirectError) {
        self.redirect = redirect
        self.peerCredentials = peerCredentials
        self.allowedUID = allowedUID
        self.connectionTimeout = connectionTimeout
        self.logger = logger
        let wake: (read: Int32, write: Int32)
        do {
            wake = try LoopbackSocket.makeWakePipe()
        } catch {
            throw .socket("create", path: "(wake pipe)", error)
        }
        (wakeReader, wakeWriter) = wake
        guard let directory else {
            listener = -1
            socketPath = nil
            return
        }
        let name: String
        do {
            name = "signin-" + (try SecureRandom.token(byteCount: 12)) + ".sock"
        } catch {
            Glibc.close(wake.read)
            Glibc.close(wake.write)
            throw SchemeRedirectError(.socketFailed, "cannot make a random name for the sign-in channel: \(error)")
        }
        let path = (directory as NSString).appendingPathComponent(name)
        do {
            listener = try Self.listen(at: path)
        } catch {
            Glibc.close(wake.read)
            Glibc.close(wake.write)
            throw .socket("listen on", path: path, error)
        }
        socketPath = path
        logger.debug("scheme redirect channel bound", metadata: ["socket": "\(path)"])
    }

    deinit {
        close()
    }

    /// Stops listening and removes the socket; a wait in progress ends with `CancellationError`. Idempotent.
    func close() {
        let closeNow = state.withLock { state -> Bool in
            switch state.phase {
            case .idle:
                state.phase = .finished
                return true
            case .waiting:
                requestStop(&state)
                return false
            case .finished:
                return false
            }
        }
        if closeNow { closeDescriptors() }
    }

    // MARK: - Waiting

    /// Serves forwarded addresses until the one with `state` arrives; returns its parameters.
    ///
    /// Throws the identity provider's refusal or an issuer mismatch as `LoopbackError` (as the loopback listener
    /// does), `SchemeRedirectError` when the socket fails, `CancellationError` on Task cancellation or `close()`.
    func waitForCallback(state expected: String, issuer: String?, requiresCode: Bool = true) async throws
        -> LoopbackCallback
    {
        let evaluator = evaluator(state: expected, issuer: issuer, requiresCode: requiresCode)
        let outcome: Outcome = await withTaskCancellationHandler {
            let start = state.withLock { state -> Outcome? in
                switch state.phase {
                case .idle where Task.isCancelled:
                    state.phase = .finished
                    return .failure(CancellationError())
                case .idle:
                    state.phase = .waiting
                    return nil
                case .waiting:
                    return .failure(
                        SchemeRedirectError(.socketFailed, "waitForCallback was called while another call is waiting"))
                case .finished:
                    return .failure(CancellationError())
                }
            }
            if let start {
                if case .failure(let error) = start, error is CancellationError { closeDescriptors() }
                return start
            }
            do {
                return try await BlockingWork.run(name: "PortalAuth.scheme", dedicatedThread: true) { [self] in
                    let outcome = serve(evaluator)
                    finish()
                    return outcome
                }
            } catch {
                finish()  // cancelled before the serving loop started
                return .failure(error)
            }
        } onCancel: {
            state.withLock { requestStop(&$0) }
        }
        return try outcome.get()
    }

    /// The callback in an address the user pasted back, by the same rules as a forwarded one.
    func callback(fromPastedURL text: String, state expected: String, issuer: String?, requiresCode: Bool = true)
        throws(LoopbackError) -> LoopbackCallback
    {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard redirect.target(of: trimmed) != nil else {
            throw .notAwaitedResponse(
                "it does not start with \(redirect); paste the whole address the browser tried to open")
        }
        switch Self.evaluate(
            trimmed, redirect: redirect,
            evaluator: evaluator(state: expected, issuer: issuer, requiresCode: requiresCode))
        {
        case (_, .success(let callback)?): return callback
        case (_, .failure(let error)?): throw error
        case (let reply, nil):
            switch reply {
            case .notThisSignIn(let reason), .invalid(let reason), .refused(let reason):
                throw .notAwaitedResponse(reason)
            case .accepted: throw .notAwaitedResponse("it cannot be read")
            }
        }
    }

    // MARK: - Evaluation

    /// What a forwarded address means for this sign-in: the reply to send and, when the wait ends, its outcome.
    static func evaluate(
        _ text: String, redirect: CustomSchemeRedirect, evaluator: CallbackEvaluator
    ) -> (reply: SchemeChannelReply, outcome: Result<LoopbackCallback, LoopbackError>?) {
        guard let target = redirect.target(of: text) else {
            return (.notThisSignIn("this sign-in waits for \(redirect), not for another scheme or host"), nil)
        }
        switch evaluator.evaluate(target: target) {
        case .accepted(let callback):
            return (.accepted, .success(callback))
        case .refused(let error):
            return (.refused(error.description), .failure(error))
        case .notFound:
            return (.notThisSignIn("its path is not \(evaluator.path)"), nil)
        case .unknownState(.missing):
            return (.notThisSignIn("it has no state parameter"), nil)
        case .unknownState(.repeated):
            return (.notThisSignIn("it has more than one state parameter"), nil)
        case .unknownState(.mismatch):
            return (.notThisSignIn("its state belongs to no request of this sign-in"), nil)
        case .malformed(let reason):
            return (.invalid(reason), nil)
        }
    }

    private func evaluator(state: String, issuer: String?, requiresCode: Bool) -> CallbackEvaluator {
        CallbackEvaluator(path: redirect.evaluatorPath, states: [state], issuer: issuer, requiresCode: requiresCode)
    }

    // MARK: - Serving (on the receiver's thread)

    private func serve(_ evaluator: CallbackEvaluator) -> Outcome {
        var descriptors = [pollfd(fd: wakeReader, events: Int16(POLLIN), revents: 0)]
        if listener >= 0 { descriptors.append(pollfd(fd: listener, events: Int16(POLLIN), revents: 0)) }
        while true {
            if state.withLock({ $0.stopRequested }) { return .failure(CancellationError()) }
            for index in descriptors.indices { descriptors[index].revents = 0 }
            let ready = poll(&descriptors, nfds_t(descriptors.count), -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return .failure(
                    SchemeRedirectError.socket(
                        "wait on", path: socketPath ?? "(none)", SystemError(call: "poll", errno: errno)))
            }
            if descriptors[0].revents != 0 { continue }  // woken: the stop flag is read at the top
            guard descriptors.count > 1, descriptors[1].revents != 0 else { continue }
            let client: Int32
            do {
                guard let accepted = try LoopbackSocket.accept(listener) else { continue }
                client = accepted
            } catch  where error.errno == ECONNABORTED || error.errno == EMFILE || error.errno == ENFILE {
                logger.debug("scheme channel: accept failed", metadata: ["error": "\(error)"])
                continue
            } catch {
                return .failure(SchemeRedirectError.socket("accept on", path: socketPath ?? "(none)", error))
            }
            defer { Glibc.close(client) }
            if let outcome = handle(client, evaluator) { return outcome.mapError { $0 } }
        }
    }

    /// Serves one connection: the peer check, one address, one reply. Returns the wait's outcome when it ends.
    private func handle(_ client: Int32, _ evaluator: CallbackEvaluator) -> Result<LoopbackCallback, LoopbackError>? {
        let peer: PeerCredentials
        do {
            peer = try peerCredentials(client)
        } catch {
            logger.debug("scheme channel: peer unknown; connection refused", metadata: ["error": "\(error)"])
            send(.invalid("the sign-in channel cannot tell who is connecting"), to: client)
            return nil
        }
        guard peer.uid == allowedUID else {
            logger.debug(
                "scheme channel: connection of another user refused",
                metadata: ["uid": "\(peer.uid)", "pid": "\(peer.pid)"])
            send(.invalid("the sign-in belongs to another user"), to: client)
            return nil
        }
        guard let text = readLine(client) else {
            send(.invalid("no address arrived (too long, not UTF-8, or too slow)"), to: client)
            return nil
        }
        let (reply, outcome) = Self.evaluate(text, redirect: redirect, evaluator: evaluator)
        logger.debug("scheme channel: address evaluated", metadata: ["reply": "\(reply.line.prefix { $0 != " " })"])
        send(reply, to: client)
        return outcome
    }

    /// One newline-terminated (or end-of-input-terminated) UTF-8 line within the size and time limits.
    private func readLine(_ client: Int32) -> String? {
        let deadline = ContinuousClock.now + connectionTimeout
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count <= SchemeChannelReply.maximumAddressBytes {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return nil }
            var descriptor = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
            let ready = poll(
                &descriptor, 1,
                Int32(max(1, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { return nil }
            let count = read(client, &buffer, buffer.count)
            if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            if count < 0 { return nil }
            if count == 0 { break }
            bytes += buffer[0..<count]
            if let newline = bytes.firstIndex(of: 10) {
                bytes.removeSubrange(newline...)
                break
            }
        }
        guard !bytes.isEmpty, bytes.count <= SchemeChannelReply.maximumAddressBytes else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }

    /// Sends `reply`, giving up when the client takes nothing for a second (it is then not waiting for it).
    private func send(_ reply: SchemeChannelReply, to client: Int32) {
        _ = sendAll(Array((reply.line + "\n").utf8), on: client) {
            var descriptor = pollfd(fd: client, events: Int16(POLLOUT), revents: 0)
            return poll(&descriptor, 1, 1000) > 0
        }
    }

    // MARK: - Ending

    private func finish() {
        state.withLock { state in state.phase = .finished }
        closeDescriptors()
    }

    private func requestStop(_ state: inout State) {
        state.stopRequested = true
        guard !state.closed else { return }
        var byte: UInt8 = 1
        _ = write(wakeWriter, &byte, 1)
    }

    /// Closes the socket (removing its file) and the wake pipe, once.
    private func closeDescriptors() {
        state.withLock { state in
            guard !state.closed else { return }
            state.closed = true
            if listener >= 0 {
                Glibc.close(listener)
                if let socketPath { unlink(socketPath) }
            }
            Glibc.close(wakeReader)
            Glibc.close(wakeWriter)
        }
    }

    // MARK: - Socket

    /// A listening Unix socket at `path` (close-on-exec, nonblocking), mode 0600.
    private static func listen(at path: String) throws(SystemError) -> Int32 {
        var address = try UnixSocketAddress(path: path)
        let fd = try syscall("socket") {
            socket(
                AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        }
        do throws(SystemError) {
            _ = try address.withPointer { (pointer, length) throws(SystemError) in
                try syscall("bind") { bind(fd, pointer, length) }
            }
            try syscall("chmod") { chmod(path, 0o600) }
            try syscall("listen") { Glibc.listen(fd, 16) }
            return fd
        } catch {
            Glibc.close(fd)
            unlink(path)
            throw error
        }
    }
}

/// The process at the other end of a Unix socket, as the kernel recorded it (`SO_PEERCRED`): it cannot be
/// claimed by the peer, so the channel trusts only this to decide who is talking.
package struct PeerCredentials: Sendable, Equatable {
    /// The peer's process ID.
    package let pid: Int32
    /// The peer's user ID.
    package let uid: UInt32
    /// The peer's group ID.
    package let gid: UInt32

    /// Reads the peer of a connected Unix socket.
    ///
    /// `struct ucred` sits behind `_GNU_SOURCE` in glibc's headers, out of Swift's reach: three 32-bit fields
    /// (pid, uid, gid) in that order on every Linux architecture, read here as such.
    package static func of(_ fd: Int32) throws(SystemError) -> PeerCredentials {
        var fields: (Int32, UInt32, UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout<(Int32, UInt32, UInt32)>.size)
        try syscall("getsockopt(SO_PEERCRED)") { getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &fields, &length) }
        guard Int(length) == MemoryLayout<(Int32, UInt32, UInt32)>.size else {
            throw SystemError(call: "getsockopt(SO_PEERCRED)", errno: EINVAL)
        }
        return PeerCredentials(pid: fields.0, uid: fields.1, gid: fields.2)
    }
}
