import Foundation
import Glibc
import Synchronization
import Testing

@testable import PortalAuth
@testable import PortalAuthCore

/// The agent's server and socket against raw connections: the protocol's refusals, the bounds (line length,
/// connections, idle clients), the peer check, the lock that keeps a second agent off the socket. The handler is a
/// stub: what a token answer holds is tested through the tool (`IntegrationTests.AgentCommandTests`).
@Suite("Agent server: protocol, bounds and who may talk", .timeLimit(.minutes(2)))
struct AgentServerTests {
    /// A server on a socket in a fresh private folder, with a stub handler.
    final class Running {
        let folder: TemporaryDirectory
        let listener: AgentSocket.Listener
        let server: AgentServer
        let task: Task<Void, any Error>

        var path: String { listener.path }

        init(
            limits: AgentServer.Limits = .init(), allowedUID: UInt32 = getuid(),
            peer: (@Sendable (Int32) throws -> PeerCredentials)? = nil,
            immediate: AgentServer.ImmediateHandler? = nil,
            handler: AgentServer.Handler? = nil
        ) throws {
            folder = try TemporaryDirectory()
            listener = try AgentSocket.listen(at: "\(folder.path)/run/agent.sock")
            let stub: AgentServer.Handler =
                handler ?? { request, _ in
                    guard case .token(let asked) = request else { return .failure(.badRequest("?")) }
                    return .token(Self.token("token-for-\(asked.minValid)"))
                }
            server = try AgentServer(
                listener: listener.descriptor, details: ["socket": .string(listener.path)], limits: limits,
                allowedUID: allowedUID, peerCredentials: peer ?? { try PeerCredentials.of($0) },
                immediate: immediate, handler: stub)
            let server = self.server
            task = Task { try await server.run() }
        }

        /// A token of the stub handlers.
        static func token(_ value: String) -> AgentToken {
            AgentToken(
                kind: .oauthUser, target: "the portal https://gis.example.com/portal",
                url: URL(string: "https://gis.example.com/portal")!, username: "alice", clientID: "app1",
                configurationFile: nil, value: value, type: "Bearer",
                expirationDate: Date(timeIntervalSince1970: 4_000_000_000), idToken: nil,
                idTokenExpirationDate: nil, isIDToken: false)
        }

        func stop() async {
            server.stop()
            _ = try? await task.value
            listener.close()
        }
    }

    /// A raw client connection (blocking, with a receive time-out that only guards against a hang). Its reads run
    /// on `BlockingWork`'s threads: blocked on the cooperative pool, they would starve the server's tasks.
    final class Connection: Sendable {
        let fd: Int32

        init(_ path: String) throws {
            fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            var address = try UnixSocketAddress(path: path)
            let result = try address.withPointer { (pointer, length) throws(SystemError) in
                Glibc.connect(fd, pointer, length)
            }
            guard result == 0 else {
                let code = errno
                Glibc.close(fd)
                throw SystemError(call: "connect", errno: code)
            }
            var limit = timeval(tv_sec: 20, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        }

        deinit { Glibc.close(fd) }

        func send(_ text: String) {
            let bytes = Array(text.utf8)
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes {
                    Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                guard written > 0 else { return }
                offset += written
            }
        }

        /// The next line, or nil at the end of the connection (or after the guard's time-out).
        func line() -> String? {
            var bytes: [UInt8] = []
            var byte: UInt8 = 0
            while read(fd, &byte, 1) == 1 {
                if byte == 10 { return String(decoding: bytes, as: UTF8.self) }
                bytes.append(byte)
            }
            return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
        }

        func answer() async -> AgentAnswer? {
            (try? await BlockingWork.run { [self] in line().flatMap(AgentAnswer.parse) }) ?? nil
        }

        /// Whether the agent closed the connection (not a time-out of the guard).
        func isClosedByPeer() async -> Bool {
            (try? await BlockingWork.run { [fd] in
                var byte: UInt8 = 0
                // A request left unread when the agent closed makes the end a reset rather than an end of file.
                let count = read(fd, &byte, 1)
                return count == 0 || (count < 0 && errno == ECONNRESET)
            }) ?? false
        }
    }

    // MARK: - The protocol

    static let refused: [(line: String, reason: AgentFailure.Reason, says: String)] = [
        ("not json", .badRequest, "not JSON"),
        ("[1, 2]", .badRequest, "not an object"),
        (#"{"op": "token"}"#, .badRequest, "no \"v\""),
        (#"{"v": 2, "op": "token"}"#, .unsupportedVersion, "version 1"),
        (#"{"v": 1}"#, .badRequest, "no \"op\""),
        (#"{"v": 1, "op": "launch"}"#, .badRequest, #"must be "token", "status" or "stop", not "launch""#),
        (
            #"{"v": 1, "op": "token", "url": "ftp://x"}"#, .badRequest,
            #"must be an absolute http or https URL, not "ftp://x""#
        ),
        (#"{"v": 1, "op": "token", "url": "https://a.example", "name": "w"}"#, .badRequest, "only one of"),
        (#"{"v": 1, "op": "token", "iap": "relative.json"}"#, .badRequest, "absolute path"),
        (#"{"v": 1, "op": "token", "min_valid": -1}"#, .badRequest, "min_valid"),
        (#"{"v": 1, "op": "token", "proxy_token": "both"}"#, .badRequest, #"must be "id" or "access", not "both""#),
        (#"{"v": 1, "op": "token", "scope": "all"}"#, .badRequest, "not a key"),
        (#"{"v": 1, "op": "refresh_token"}"#, .forbidden, "refresh tokens are never handed out"),
        (#"{"v": 1, "op": "token", "refresh_token": true}"#, .forbidden, "refresh tokens are never handed out"),
    ]

    @Test("a malformed request, a refresh token asked for: refused with the reason, and the connection goes on")
    func malformedRequests() async throws {
        let running = try Running()
        let connection = try Connection(running.path)
        for (line, reason, says) in Self.refused {
            connection.send(line + "\n")
            let answer = try #require(await connection.answer(), "no answer to \(line)")
            guard case .failure(let failure) = answer else {
                Issue.record("\(line) was answered \(answer)")
                continue
            }
            #expect(failure.reason == reason, "\(line)")
            #expect(failure.message.contains(says), "\(line): \(failure.message)")
        }
        connection.send(#"{"v": 1, "op": "token", "min_valid": 60}"# + "\n")
        guard case .token(let token)? = await connection.answer() else {
            Issue.record("a valid request after the refused ones got no token")
            return
        }
        #expect(token.value == "token-for-60")
        #expect(running.server.counts.answered == 1, "only the valid request reached the handler")
        await running.stop()
    }

    @Test(
        "the immediate handler answers what it can on the serving thread, the handler the rest, in order on one connection"
    )
    func immediateAnswers() async throws {
        let handled = Atomic<Int>(0)
        // Kept: a min_valid under 100 (as a kept token valid long enough); the rest goes to the handler.
        let running = try Running(
            immediate: { request, _ in
                guard case .token(let asked) = request, asked.minValid < 100 else { return nil }
                return .token(Running.token("kept-\(asked.minValid)"))
            },
            handler: { request, _ in
                handled.add(1, ordering: .relaxed)
                guard case .token(let asked) = request else { return .failure(.badRequest("?")) }
                return .token(Running.token("read-\(asked.minValid)"))
            })
        let connection = try Connection(running.path)
        // Sent at once: the answers come back in the order of the requests, whoever answers each.
        connection.send(
            [10, 500, 20, 600].map { #"{"v":1,"op":"token","min_valid":\#($0)}"# + "\n" }.joined())
        var values: [String] = []
        for _ in 0..<4 {
            guard case .token(let token)? = await connection.answer() else { break }
            values.append(token.value)
        }
        #expect(values == ["kept-10", "read-500", "kept-20", "read-600"])
        #expect(handled.load(ordering: .relaxed) == 2, "the kept tokens never reached the handler")
        #expect(running.server.counts.answered == 4)
        // A status is the server's own, never the immediate handler's.
        connection.send(#"{"v":1,"op":"status"}"# + "\n")
        guard case .status(let agent)? = await connection.answer() else {
            Issue.record("no status")
            return
        }
        #expect(agent["protocol"]?.integerValue == 1)
        await running.stop()
    }

    @Test("a request line longer than the bound: too_long, and the connection is closed")
    func oversizedRequest() async throws {
        var limits = AgentServer.Limits()
        limits.maximumRequestBytes = 1024
        let running = try Running(limits: limits)
        let connection = try Connection(running.path)
        connection.send(String(repeating: "x", count: 4096))
        guard case .failure(let failure)? = await connection.answer() else {
            Issue.record("no too_long answer")
            return
        }
        #expect(failure.reason == .tooLong)
        #expect(failure.reason.status == 64)
        #expect(await connection.isClosedByPeer())
        // The agent still serves.
        let other = try Connection(running.path)
        other.send(#"{"v":1,"op":"status"}"# + "\n")
        guard case .status(let agent)? = await other.answer() else {
            Issue.record("no status after an oversized request")
            return
        }
        #expect(agent["protocol"]?.integerValue == 1)
        await running.stop()
    }

    @Test("a client that connects and stalls mid-line is cut off when idle; others are served meanwhile")
    func stalledClient() async throws {
        var limits = AgentServer.Limits()
        limits.idleTimeout = .milliseconds(300)
        let running = try Running(limits: limits)
        let stalled = try Connection(running.path)
        stalled.send(#"{"v": 1, "op": "tok"#)
        let other = try Connection(running.path)
        other.send(#"{"v":1,"op":"token","min_valid":1}"# + "\n")
        guard case .token(let token)? = await other.answer() else {
            Issue.record("a client waited on the stalled one")
            return
        }
        #expect(token.value == "token-for-1")
        #expect(await stalled.isClosedByPeer(), "the stalled client was not cut off")
        await running.stop()
    }

    @Test(
        "1,000 connections at once: each is answered or told busy; the agent serves no more than its bound, then goes on"
    )
    func thousandConnections() async throws {
        var limits = AgentServer.Limits()
        limits.maximumConnections = 32
        let running = try Running(limits: limits)
        // 1,000 client ends and the agent's side in one process: more descriptors than a default soft limit of 1,024.
        var descriptors = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &descriptors)
        if descriptors.rlim_cur < 4096 {
            descriptors.rlim_cur = min(descriptors.rlim_max, 4096)
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &descriptors)
        }
        var connections: [Connection] = []
        for _ in 0..<1000 {
            connections.append(try Connection(running.path))
        }
        for connection in connections { connection.send(#"{"v":1,"op":"token","min_valid":5}"# + "\n") }
        var tokens = 0, busy = 0
        for connection in connections {
            switch await connection.answer() {
            case .token?: tokens += 1
            case .failure(let failure)? where failure.reason == AgentFailure.Reason.busy: busy += 1
            case let other: Issue.record("unexpected answer \(String(describing: other))")
            }
        }
        #expect(tokens + busy == 1000)
        #expect(tokens >= 32)
        #expect(busy > 0, "the bound of 32 connections was never reached")
        #expect(running.server.counts.open <= 32)
        connections.removeAll()
        // The agent serves again once it has seen the closed connections go (busy until then).
        var status: JSONObject?
        for _ in 0..<200 where status == nil {
            let after = try Connection(running.path)
            after.send(#"{"v":1,"op":"status"}"# + "\n")
            switch await after.answer() {
            case .status(let agent)?: status = agent
            case .failure(let failure)? where failure.reason == AgentFailure.Reason.busy: continue
            case let other: Issue.record("unexpected answer after the burst: \(String(describing: other))")
            }
        }
        let agent = try #require(status, "no status after the burst")
        #expect((agent["refused_busy"]?.integerValue ?? 0) >= Int64(busy))
        await running.stop()
    }

    @Test("a connection whose peer (SO_PEERCRED) is another user is refused before its request is read")
    func otherUser() async throws {
        let running = try Running(peer: { _ in PeerCredentials(pid: 4242, uid: getuid() &+ 1, gid: 0) })
        let connection = try Connection(running.path)
        connection.send(#"{"v":1,"op":"token"}"# + "\n")
        guard case .failure(let failure)? = await connection.answer() else {
            Issue.record("another user's connection was answered")
            return
        }
        #expect(failure.reason == .forbidden)
        #expect(failure.message.contains("serves only its own user"))
        #expect(await connection.isClosedByPeer())
        #expect(running.server.counts.refusedUsers == 1)
        await running.stop()
    }

    @Test("stop: answered, then the server ends")
    func stopRequest() async throws {
        let running = try Running()
        let path = running.path
        let answer = try await BlockingWork.run { try AgentSocket.ask(.stop, at: path, timeout: .seconds(20)) }
        #expect(answer == .stopping)
        try await running.task.value
        running.listener.close()
        #expect(throws: AgentSocketError.self) { try AgentSocket.ask(.status, at: running.path, timeout: .seconds(5)) }
    }

    // MARK: - The socket

    @Test("a second agent on the same socket is told one already serves; a socket left by a dead agent is replaced")
    func secondAgent() async throws {
        let running = try Running()
        do {
            _ = try AgentSocket.listen(at: running.path)
            Issue.record("a second agent took the socket")
        } catch {
            #expect(error.code == .alreadyServing)
            #expect(error.description.contains("already serves"))
        }
        await running.stop()
        // A dead agent's socket: a file is there, but nobody holds the lock.
        let folder = try TemporaryDirectory()
        let path = "\(folder.path)/agent.sock"
        try AgentSocket.listen(at: path).close()
        // The socket file a SIGKILLed agent leaves: bound, then its process gone.
        var address = try UnixSocketAddress(path: path)
        let leftover = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        _ = try address.withPointer { (pointer, length) throws(SystemError) in bind(leftover, pointer, length) }
        close(leftover)
        #expect(access(path, F_OK) == 0)
        do {
            _ = try AgentSocket.ask(.status, at: path, timeout: .seconds(5))
            Issue.record("a stale socket answered")
        } catch {
            #expect(error.code == .notServing)
        }
        let second = try AgentSocket.listen(at: path)
        second.close()
    }

    @Test("the socket's folder: created 0700; a link, another's or a group-readable folder is refused")
    func privateFolder() throws {
        let folder = try TemporaryDirectory()
        let made = try AgentSocket.listen(at: "\(folder.path)/new/agent.sock")
        var info = stat()
        #expect(lstat("\(folder.path)/new", &info) == 0)
        #expect(info.st_mode & 0o777 == 0o700)
        #expect(lstat(made.path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        made.close()

        #expect(mkdir("\(folder.path)/open", 0o755) == 0)
        #expect(chmod("\(folder.path)/open", 0o755) == 0)
        #expect(symlink("\(folder.path)/new", "\(folder.path)/link") == 0)
        for (name, says) in [("open", "chmod 700"), ("link", "a link is not followed")] {
            do {
                _ = try AgentSocket.listen(at: "\(folder.path)/\(name)/agent.sock")
                Issue.record("listened in \(name)")
            } catch {
                #expect(error.description.contains(says), "\(error)")
            }
        }
    }
}
