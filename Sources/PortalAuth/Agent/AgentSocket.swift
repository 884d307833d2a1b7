import Foundation
import Glibc
package import PortalAuthCore
import Synchronization

/// Where the agent listens and how both ends reach it: `$XDG_RUNTIME_DIR/portal-auth/agent.sock` by default (or the
/// path `PORTAL_AUTH_AGENT` names), a socket 0600 in a folder of this user's that no one else can enter, created
/// without following links; a lock file beside it held while an agent serves, so a second agent knows.
package enum AgentSocket {
    /// The variable that names the agent's socket for the tool (and that `portal-auth agent` prints).
    package static let environmentVariable = "PORTAL_AUTH_AGENT"
    /// The socket's name in `$XDG_RUNTIME_DIR/portal-auth`.
    package static let defaultName = "agent.sock"

    /// `$XDG_RUNTIME_DIR/portal-auth/agent.sock`; nil when `XDG_RUNTIME_DIR` is unset or relative.
    package static func defaultPath(lookup: (String) -> String? = ProcessEnvironment.value(of:)) -> String? {
        guard let runtime = lookup("XDG_RUNTIME_DIR"), runtime.hasPrefix("/") else { return nil }
        return (runtime as NSString).appendingPathComponent("\(RedirectChannelDirectory.name)/\(defaultName)")
    }

    /// The file name of the forwarding socket (for `ssh -R`), beside the agent's own.
    package static let forwardName = "agent-forward.sock"

    /// The forwarding socket beside the agent's socket at `path`.
    package static func forwardPath(besides path: String) -> String {
        ((path as NSString).deletingLastPathComponent as NSString).appendingPathComponent(forwardName)
    }

    /// The socket a client asks: `PORTAL_AUTH_AGENT` when set (explicit: the caller says the agent must answer),
    /// else the default path (tried, and the store used when nothing answers); nil when there is neither.
    package static func clientPath(lookup: (String) -> String? = ProcessEnvironment.value(of:)) -> (
        path: String, explicit: Bool
    )? {
        if let named = lookup(environmentVariable), !named.isEmpty { return (named, true) }
        return defaultPath(lookup: lookup).map { ($0, false) }
    }

    // MARK: - Serving

    /// A listening socket at `path` with the lock that says an agent serves there; closed (the socket's file
    /// removed, the lock released) by `close()` or when released. A socket handed over by systemd is only closed:
    /// its file and its life are systemd's.
    package final class Listener: Sendable {
        package let descriptor: Int32
        package let path: String
        /// The lock's descriptor; -1 for a socket handed over by systemd.
        private let lock: Int32
        private let closed = Mutex(false)

        init(descriptor: Int32, path: String, lock: Int32) {
            self.descriptor = descriptor
            self.path = path
            self.lock = lock
        }

        deinit { close() }

        /// Whether systemd handed the socket over (socket activation).
        package var isInherited: Bool { lock < 0 }

        /// Closes the socket, removes its file and releases the lock. Idempotent.
        package func close() {
            guard
                closed.withLock({ closed in
                    defer { closed = true }; return !closed
                })
            else { return }
            Glibc.close(descriptor)
            guard lock >= 0 else { return }
            unlink(path)
            Glibc.close(lock)
        }
    }

    /// The listening socket systemd handed over (socket activation, as `portal-auth-agent.socket` or
    /// `systemd-socket-activate` start the agent): `LISTEN_PID` is this process and `LISTEN_FDS` at least 1, the
    /// first being descriptor 3 (sd_listen_fds(3)); nil when this process was not started so. The variables are
    /// removed, so no child inherits them.
    ///
    /// - Throws: `AgentSocketError` when descriptor 3 is not a listening Unix stream socket.
    package static func inheritedListener(path: String) throws(AgentSocketError) -> Listener? {
        guard let pid = ProcessEnvironment.value(of: "LISTEN_PID"), Int32(pid) == getpid(),
            let count = ProcessEnvironment.value(of: "LISTEN_FDS").flatMap({ Int($0) }), count >= 1
        else { return nil }
        for name in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] { unsetenv(name) }
        let fd: Int32 = 3
        var listening: Int32 = 0
        var family = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        var optionLength = socklen_t(MemoryLayout<Int32>.size)
        let named = withUnsafeMutablePointer(to: &family) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &optionLength) == 0, listening != 0, named == 0,
            family.sun_family == sa_family_t(AF_UNIX)
        else {
            throw AgentSocketError(
                .socket,
                "the socket handed over (LISTEN_FDS) is not a listening Unix socket; the unit's [Socket] needs ListenStream=PATH"
            )
        }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return Listener(descriptor: fd, path: path, lock: -1)
    }

    /// Takes the lock beside `path` and listens there (close-on-exec, nonblocking), after making sure its folder
    /// is a private folder of this user's (created 0700 when missing); a stale socket left by an agent that died is
    /// replaced.
    ///
    /// - Throws: `AgentSocketError.alreadyServing` when another agent holds the lock; `AgentSocketError` naming the
    ///   path and what to do otherwise.
    package static func listen(at path: String, backlog: Int32 = 512) throws(AgentSocketError) -> Listener {
        guard path.hasPrefix("/") else {
            throw AgentSocketError(
                .socket,
                "the agent's socket path must be absolute\(MessagePart.given(", not ", DisplayText.path(path)))")
        }
        try preparePrivateFolder((path as NSString).deletingLastPathComponent)
        let lockPath = path + ".lock"
        let lock = open(lockPath, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard lock >= 0 else {
            throw AgentSocketError(
                .socket, "cannot open \(DisplayText.path(lockPath)): \(String(cString: strerror(errno)))")
        }
        guard flock(lock, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            Glibc.close(lock)
            if code == EWOULDBLOCK { throw AgentSocketError(.alreadyServing, path) }
            throw AgentSocketError(
                .socket, "cannot lock \(DisplayText.path(lockPath)): \(String(cString: strerror(code)))")
        }
        // The lock is ours: whatever socket is there was left by an agent that ended without removing it.
        var info = stat()
        if lstat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFSOCK, info.st_uid == getuid() else {
                Glibc.close(lock)
                throw AgentSocketError(
                    .socket,
                    "\(DisplayText.path(path)) exists and is not a socket of yours; remove it, or name another path")
            }
            unlink(path)
        }
        do throws(SystemError) {
            var address = try UnixSocketAddress(path: path)
            let fd = try syscall("socket") {
                socket(
                    AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue),
                    0)
            }
            do throws(SystemError) {
                // The folder is 0700: nobody else can reach the socket between bind and chmod.
                _ = try address.withPointer { (pointer, length) throws(SystemError) in
                    try syscall("bind") { bind(fd, pointer, length) }
                }
                try syscall("chmod") { chmod(path, 0o600) }
                try syscall("listen") { Glibc.listen(fd, backlog) }
            } catch {
                Glibc.close(fd)
                unlink(path)
                throw error
            }
            return Listener(descriptor: fd, path: path, lock: lock)
        } catch {
            Glibc.close(lock)
            throw AgentSocketError(.socket, "cannot listen on \(DisplayText.path(path)): \(error)")
        }
    }

    /// Makes sure `folder` is a real folder (not a link) of this user's that no one else may enter: created 0700
    /// when missing (its parent must exist).
    static func preparePrivateFolder(_ folder: String) throws(AgentSocketError) {
        if mkdir(folder, 0o700) != 0, errno != EEXIST {
            throw AgentSocketError(
                .socket, "cannot create the folder \(DisplayText.path(folder)): \(String(cString: strerror(errno)))")
        }
        var info = stat()
        guard lstat(folder, &info) == 0 else {
            throw AgentSocketError(
                .socket, "cannot read \(DisplayText.path(folder)): \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw AgentSocketError(
                .socket,
                "\(DisplayText.path(folder)) is not a folder (a link is not followed); name another socket path")
        }
        guard info.st_uid == getuid() else {
            throw AgentSocketError(
                .socket,
                "\(DisplayText.path(folder)) belongs to user \(info.st_uid), not to you (\(getuid())); the agent's socket must be in a folder of yours"
            )
        }
        guard info.st_mode & 0o077 == 0 else {
            throw AgentSocketError(
                .socket,
                "\(DisplayText.path(folder)) has mode \(String(info.st_mode & 0o777, radix: 8)): others may enter it; run chmod 700 \(DisplayText.path(folder))"
            )
        }
    }

    // MARK: - Asking

    /// Connects to the agent at `path`, sends `request` and reads its answer, within `timeout`.
    ///
    /// - Throws: `AgentSocketError` with `.notServing` when nothing listens there (no socket, or a stale one),
    ///   `.socket` for a connection that fails or ends before an answer, `.timedOut`.
    package static func ask(_ request: AgentRequest, at path: String, timeout: Duration = .seconds(300))
        throws(AgentSocketError) -> AgentAnswer
    {
        let deadline = ContinuousClock.now + timeout
        let fd = try connect(to: path)
        defer { Glibc.close(fd) }
        let failure = try sendAll(Array((request.line + "\n").utf8), on: fd) { () throws(AgentSocketError) in
            try wait(fd, for: Int16(POLLOUT), until: deadline, path: path)
            return true
        }
        if let failure {
            throw AgentSocketError(
                .socket, "cannot write to the agent at \(DisplayText.path(path)): \(String(cString: strerror(failure)))"
            )
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            if let newline = received.firstIndex(of: 10) {
                guard let answer = AgentAnswer.parse(String(decoding: received[..<newline], as: UTF8.self)) else {
                    throw AgentSocketError(
                        .socket, "the agent at \(DisplayText.path(path)) sent an answer this version cannot read")
                }
                return answer
            }
            guard received.count <= AgentProtocol.maximumAnswerBytes else {
                throw AgentSocketError(
                    .socket,
                    "the agent at \(DisplayText.path(path)) sent an answer longer than \(AgentProtocol.maximumAnswerBytes) bytes"
                )
            }
            try wait(fd, for: Int16(POLLIN), until: deadline, path: path)
            let count = read(fd, &buffer, buffer.count)
            if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            guard count > 0 else {
                throw AgentSocketError(
                    .socket, "the agent at \(DisplayText.path(path)) closed the connection without an answer")
            }
            received += buffer[0..<count]
        }
    }

    /// A connected, nonblocking socket to `path`.
    private static func connect(to path: String) throws(AgentSocketError) -> Int32 {
        let fd: Int32
        do throws(SystemError) {
            var address = try UnixSocketAddress(path: path)
            fd = try syscall("socket") {
                socket(
                    AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue),
                    0)
            }
            do throws(SystemError) {
                _ = try address.withPointer { (pointer, length) throws(SystemError) in
                    try syscall("connect") { Glibc.connect(fd, pointer, length) }
                }
            } catch {
                Glibc.close(fd)
                throw error
            }
        } catch {
            switch error.errno {
            case ENOENT, ECONNREFUSED, ENOTDIR:
                throw AgentSocketError(.notServing, path)
            case EAGAIN:
                throw AgentSocketError(
                    .busy, "the agent at \(DisplayText.path(path)) has a full queue of connections; try again")
            default:
                throw AgentSocketError(.socket, "cannot connect to the agent at \(DisplayText.path(path)): \(error)")
            }
        }
        return fd
    }

    private static func wait(_ fd: Int32, for events: Int16, until deadline: ContinuousClock.Instant, path: String)
        throws(AgentSocketError)
    {
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else {
                throw AgentSocketError(.timedOut, "the agent at \(DisplayText.path(path)) did not answer in time")
            }
            var descriptor = pollfd(fd: fd, events: events, revents: 0)
            let milliseconds = left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000
            let ready = poll(&descriptor, 1, Int32(min(Int64(Int32.max), max(1, milliseconds))))
            if ready < 0 && errno == EINTR { continue }
            if ready > 0 { return }
        }
    }
}

/// Why the agent's socket could not be used.
package struct AgentSocketError: Error, Sendable, CategorizedError, CustomStringConvertible {
    package enum Code: Sendable, Equatable {
        /// Another agent holds the socket's lock (the message is the socket's path).
        case alreadyServing
        /// Nothing listens at the path (the message is the path).
        case notServing
        /// The agent's connections are full.
        case busy
        /// No answer in time.
        case timedOut
        /// The folder, the socket or the connection failed (the message says how).
        case socket
    }

    package let code: Code
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var category: ErrorCategory {
        switch code {
        case .alreadyServing: return .usage
        case .notServing, .busy: return .unavailable
        case .timedOut: return .timedOut
        case .socket: return .local
        }
    }

    package var description: String {
        switch code {
        case .alreadyServing:
            return "an agent already serves\(MessagePart.given(" on ", DisplayText.path(message))); stop it with "
                + "`portal-auth agent stop` first"
        case .notServing:
            return
                "no agent answers\(MessagePart.given(" on ", DisplayText.path(message))); start one with `portal-auth agent`"
        case .busy, .timedOut, .socket:
            return message
        }
    }
}
