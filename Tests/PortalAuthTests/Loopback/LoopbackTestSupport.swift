import Foundation
import Glibc
import Logging
import Synchronization
@testable import PortalAuth
@testable import PortalAuthCore

/// The outcome of a wait, as a value (for `async let`).
func outcome(
    of listener: LoopbackListener, state: String = "s-123", issuer: String? = nil, requiresCode: Bool = true,
    timeout: Duration = .seconds(45)  // A hang guard only: a loaded two-core machine can be slow to serve.
) async -> Result<LoopbackCallback, LoopbackError> {
    do {
        return .success(
            try await listener.waitForCallback(
                state: state, issuer: issuer, requiresCode: requiresCode, timeout: timeout))
    } catch {
        return .failure(error)
    }
}

extension Result {
    /// The error of a failed result, nil for a success (for `#require`).
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

// MARK: - A blocking HTTP client with time limits

/// A client socket with send and receive time limits, so no test can hang on it.
final class TestSocket: @unchecked Sendable {
    let fd: Int32

    /// Connects to `host` (an IPv4 or IPv6 literal) on `port`; `timeout` limits each send and receive.
    ///
    /// The default is a hang guard only: a client connects as soon as the listener is bound, but the listener serves
    /// only once its waiting task has had a turn on the cooperative pool, which other tests can keep busy for
    /// seconds on a loaded machine.
    init(host: String = "127.0.0.1", port: Int, timeout: Duration = .seconds(60)) throws {
        // Connected before `self` exists: a failed connect must not reach `deinit`, which would close the
        // descriptor a second time (and, with tests in parallel, someone else's socket).
        fd = try Self.connect(host: host, port: port, timeout: timeout)
    }

    private static func connect(host: String, port: Int, timeout: Duration) throws -> Int32 {
        let fd = socket(
            host.contains(":") ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: \(errno)") }
        var limit = timeval(tv_sec: Int(timeout.components.seconds), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        guard withSocketAddress(host: host, port: port, { Glibc.connect(fd, $0, $1) }) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw TestFailure("connect to \(host):\(port): \(String(cString: strerror(code)))")
        }
        return fd
    }

    deinit { Glibc.close(fd) }

    /// Sends all bytes; false when the peer closed or reset the connection first.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            offset += count
        }
        return true
    }

    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// How a read ended.
    enum End: Equatable {
        case closed, reset, timedOut
    }

    /// What ``readToEnd()`` read, and how the reading ended.
    typealias Reading = (bytes: [UInt8], end: End)

    /// Reads until the peer closes (or resets, or the receive limit passes).
    func readToEnd() -> Reading {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 8192)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count > 0 {
                bytes += buffer[..<count]
                continue
            }
            if count == 0 { return (bytes, .closed) }
            if errno == EINTR { continue }
            return (bytes, errno == EAGAIN || errno == EWOULDBLOCK ? .timedOut : .reset)
        }
    }

    /// The local port of this client (to find the server's side of the connection).
    var localPort: Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return withUnsafeBytes(of: storage) { Int(UInt16(bigEndian: $0.load(as: sockaddr_in.self).sin_port)) }
    }
}

/// A parsed response.
struct TestResponse: Sendable {
    let status: Int
    /// Header values by lowercased name.
    let headers: [String: String]
    let body: String

    init?(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { return nil }
        let lines = text[..<split.lowerBound].components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { return nil }
        self.status = status
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        self.headers = headers
        self.body = String(text[split.upperBound...])
    }
}

/// Sends `raw` on a new connection to `port` and reads the whole answer (off the cooperative pool).
func exchange(_ raw: String, port: Int, host: String = "127.0.0.1") async throws -> TestResponse {
    try await BlockingWork.run {
        let socket = try TestSocket(host: host, port: port)
        socket.send(raw)
        let (bytes, end) = socket.readToEnd()
        guard let response = TestResponse(bytes) else {
            throw TestFailure("no HTTP response (\(bytes.count) bytes, \(end))")
        }
        return response
    }
}

/// `GET target` with a loopback Host header.
func get(_ target: String, port: Int, host: String = "127.0.0.1") async throws -> TestResponse {
    let hostHeader = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    return try await exchange(
        "GET \(target) HTTP/1.1\r\nHost: \(hostHeader)\r\nUser-Agent: test\r\nAccept: text/html\r\n\r\n", port: port,
        host: host)
}

// MARK: - Ports and descriptors

/// Calls `body` with the socket address of `host` (an IPv4 or IPv6 literal) and `port`.
func withSocketAddress(
    host: String, port: Int, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32
) -> Int32 {
    func call<Address>(_ address: inout Address) -> Int32 {
        withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<Address>.size)) }
        }
    }
    if host.contains(":") {
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_port = UInt16(port).bigEndian
        inet_pton(AF_INET6, host, &address.sin6_addr)
        return call(&address)
    }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    inet_pton(AF_INET, host, &address.sin_addr)
    return call(&address)
}

/// A port of 127.0.0.1 that nothing uses, for tests that need a fixed port.
///
/// It is drawn below the kernel's ephemeral range (`ip_local_port_range`), which the kernel never hands out by itself:
/// an ephemeral port, free a moment ago, can be given to a connection of a test running beside before the fixed-port
/// listener binds it (it was, on a loaded machine), while a port below the range is only ever taken on purpose.
func freePort() throws -> Int {
    let range = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8))?
        .split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
    let ephemeralStart = range?.first ?? 32768
    let candidates = max(1024, ephemeralStart - 16384)..<max(1025, ephemeralStart)
    for _ in 0..<200 {
        let port = Int.random(in: candidates)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: \(errno)") }
        let bound = withSocketAddress(host: "127.0.0.1", port: port, { bind(fd, $0, $1) }) == 0
        Glibc.close(fd)
        if bound { return port }
    }
    throw TestFailure("no free port of 127.0.0.1 in \(candidates)")
}

/// Whether this machine can bind `::1` (IPv6 on the loopback interface).
func ipv6LoopbackAvailable() -> Bool {
    let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { Glibc.close(fd) }
    return withSocketAddress(host: "::1", port: 0, { bind(fd, $0, $1) }) == 0
}

/// The descriptor of this process's IPv4 TCP socket whose local port is `local` and whose peer's port is `remote`
/// (the listener's side of a test connection), found by asking every open descriptor.
func socketDescriptor(localPort local: Int, remotePort remote: Int) -> Int32? {
    func port(_ fd: Int32, _ call: (Int32, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32)
        -> Int?
    {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let result = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { call(fd, $0, &length) }
        }
        guard result == 0, address.sin_family == sa_family_t(AF_INET) else { return nil }
        return Int(UInt16(bigEndian: address.sin_port))
    }
    for fd in Int32(3)..<Int32(4096) where fcntl(fd, F_GETFD) >= 0 {
        if port(fd, { getsockname($0, $1, $2) }) == local, port(fd, { getpeername($0, $1, $2) }) == remote {
            return fd
        }
    }
    return nil
}

// MARK: - Logs

/// The lines a `CapturingLogHandler` kept.
final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])

    func append(_ line: String) { lines.withLock { $0.append(line) } }

    var text: String { lines.withLock { $0.joined(separator: "\n") } }
}

/// Keeps every log message and its metadata, to check that no secret reaches the log.
struct CapturingLogHandler: LogHandler {
    let storage: LogLines
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let line = "\(event.message) \(event.metadata ?? [:])"
        storage.append(line)
    }
}

/// Processes that keep `count` cores busy (a shell loop each) until ``stop()``: a loaded machine for tests of what
/// must hold under load, bounded by the test that starts them.
final class BusyCores: Sendable {
    private let processes: [ChildProcess]

    init(count: Int) throws {
        var started: [ChildProcess] = []
        for _ in 0..<count {
            let process = ChildProcess()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "while :; do :; done"]
            do {
                try process.run()
            } catch {
                for running in started { kill(running.processIdentifier, SIGKILL) }
                throw error
            }
            started.append(process)
        }
        processes = started
    }

    /// Kills the processes (SIGKILL) and reaps them.
    func stop() {
        for process in processes where process.isRunning { kill(process.processIdentifier, SIGKILL) }
        for process in processes { process.waitUntilExit() }
    }
}
