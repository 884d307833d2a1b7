import Foundation
import Glibc
import Logging
import Testing
@testable import PortalAuth
@testable import PortalAuthCore

/// The listener on real loopback sockets. Every wait has its own time limit and every client socket a receive
/// limit, so a broken listener fails a test instead of hanging it.
@Suite("Loopback listener", .timeLimit(.minutes(1)))
struct LoopbackListenerTests {
    static let callbackURL = URL(string: "http://127.0.0.1/callback")!

    // MARK: - Binding

    @Test("an ephemeral port is bound and reported in the redirect URL")
    func ephemeralPort() throws {
        let listener = try LoopbackListener(redirectURL: Self.callbackURL)
        #expect(listener.port > 0)
        #expect(listener.redirectURL.absoluteString == "http://127.0.0.1:\(listener.port)/callback")
        #expect(listener.listeningAddresses == ["127.0.0.1:\(listener.port)"])
        _ = try TestSocket(port: listener.port)  // It accepts connections.
    }

    @Test("a fixed port is bound as given")
    func fixedPort() throws {
        let port = try freePort()
        let listener = try LoopbackListener(redirectURL: #require(URL(string: "http://127.0.0.1:\(port)/cb")))
        #expect(listener.port == port)
        #expect(listener.redirectURL.absoluteString == "http://127.0.0.1:\(port)/cb")
    }

    @Test("a busy fixed port fails at once, naming the address and port and what to do")
    func busyPort() throws {
        let holder = try LoopbackListener(redirectURL: Self.callbackURL)
        let url = try #require(URL(string: "http://127.0.0.1:\(holder.port)/callback"))
        #expect {
            try LoopbackListener(redirectURL: url)
        } throws: { error in
            guard let error = error as? LoopbackError else { return false }
            return error.kind == .portInUse && error.category == .usage
                && error.description.contains("127.0.0.1:\(holder.port)")
                && error.description.contains("choose another port")
        }
    }

    @Test(
        "localhost binds 127.0.0.1 and ::1 on one port, and the redirect URL keeps saying localhost",
        .enabled(if: ipv6LoopbackAvailable(), "this machine has no IPv6 loopback"))
    func localhostBothFamilies() async throws {
        let listener = try LoopbackListener(redirectURL: #require(URL(string: "http://localhost/callback")))
        let port = listener.port
        #expect(listener.redirectURL.absoluteString == "http://localhost:\(port)/callback")
        #expect(listener.listeningAddresses == ["127.0.0.1:\(port)", "[::1]:\(port)"])
        async let result = outcome(of: listener)
        let overIPv6 = try await get("/favicon.ico", port: port, host: "::1")
        #expect(overIPv6.status == 404)
        let overIPv4 = try await get("/callback?code=c&state=s-123", port: port, host: "127.0.0.1")
        #expect(overIPv4.status == 200)
        #expect(try await result.get().code == "c")
    }

    @Test("[::1] binds IPv6 only", .enabled(if: ipv6LoopbackAvailable(), "this machine has no IPv6 loopback"))
    func ipv6Only() async throws {
        // A port outside the ephemeral range, so that no other test's listener on 127.0.0.1 can have it meanwhile.
        let listener = try LoopbackListener(
            redirectURL: #require(URL(string: "http://[::1]:\(try freePort())/callback")))
        #expect(listener.listeningAddresses == ["[::1]:\(listener.port)"])
        #expect(throws: TestFailure.self) { try TestSocket(host: "127.0.0.1", port: listener.port) }
        async let result = outcome(of: listener)
        #expect(try await get("/callback?code=c&state=s-123", port: listener.port, host: "::1").status == 200)
        #expect(try await result.get().code == "c")
    }

    @Test(
        "localhost on a fixed port whose ::1 side is taken fails naming [::1] (a browser would reach the other program)",
        .enabled(if: ipv6LoopbackAvailable(), "this machine has no IPv6 loopback"))
    func localhostHalfBusy() throws {
        // A port outside the kernel's ephemeral range: an ephemeral port of ::1 may be the local port of another
        // test's IPv4 client connection at the same time, which would make 127.0.0.1 busy too.
        let holder = try LoopbackListener(redirectURL: #require(URL(string: "http://[::1]:\(try freePort())/callback")))
        let url = try #require(URL(string: "http://localhost:\(holder.port)/callback"))
        #expect {
            try LoopbackListener(redirectURL: url)
        } throws: { error in
            (error as? LoopbackError)?.kind == .portInUse
                && (error as? LoopbackError)?.description.contains("[::1]:\(holder.port)") == true
        }
        // The IPv4 side was released: the port can be bound there.
        _ = try LoopbackListener(redirectURL: #require(URL(string: "http://127.0.0.1:\(holder.port)/callback")))
    }

    @Test("listening sockets are close-on-exec and nonblocking")
    func listeningFlags() throws {
        let listener = try LoopbackListener(redirectURL: Self.callbackURL)
        for fd in listener.listeningDescriptors {
            #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0)
            #expect(fcntl(fd, F_GETFL) & O_NONBLOCK != 0)
        }
    }

    @Test("accepted sockets are close-on-exec")
    func acceptedFlags() async throws {
        let listener = try LoopbackListener(redirectURL: Self.callbackURL)
        async let result = outcome(of: listener)
        let client = try TestSocket(port: listener.port)
        client.send("GET /cal")  // Keeps the connection open, half a request in.
        var descriptor: Int32?
        for _ in 0..<100 where descriptor == nil {
            descriptor = socketDescriptor(localPort: listener.port, remotePort: client.localPort)
            try await Task.sleep(for: .milliseconds(20))
        }
        let fd = try #require(descriptor, "the listener's side of the connection was not found")
        #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0, "close-on-exec missing")
        #expect(fcntl(fd, F_GETFL) & O_NONBLOCK != 0, "nonblocking missing")
        #expect(try await get("/callback?code=c&state=s-123", port: listener.port).status == 200)
        _ = await result
    }

    // MARK: - Routing

    @Test("a favicon request gets 404 and the sign-in still completes")
    func faviconThenSuccess() async throws {
        let configuration = LoopbackListener.Configuration(
            successTitle: "Signed in", successMessage: "Signed in to <Portal>. You can close this tab.")
        let listener = try LoopbackListener(redirectURL: Self.callbackURL, configuration: configuration)
        async let result = outcome(of: listener)
        let favicon = try await get("/favicon.ico", port: listener.port)
        #expect(favicon.status == 404)
        #expect(favicon.headers["connection"] == "close")
        let success = try await get("/callback?code=the-code&state=s-123&iss=x", port: listener.port)
        #expect(success.status == 200)
        #expect(success.body.contains("Signed in to &lt;Portal&gt;. You can close this tab."))
        #expect(
            success.headers["content-security-policy"]?.hasPrefix("default-src 'none'; style-src 'unsafe-inline'")
                == true)
        #expect(success.headers["cache-control"] == "no-store")
        #expect(success.headers["referrer-policy"] == "no-referrer")
        #expect(success.headers["content-type"] == "text/html; charset=utf-8")
        let callback = try await result.get()
        #expect(callback.code == "the-code")
        #expect(callback.state == "s-123")
        #expect(callback["iss"] == "x")
    }

    @Test("a wrong state gets 400 with an explanation; the right one then completes")
    func wrongStateFirst() async throws {
        let listener = try LoopbackListener(redirectURL: Self.callbackURL)
        async let result = outcome(of: listener)
        let wrong = try await get("/callback?code=x&state=stale", port: listener.port)
        #expect(wrong.status == 400)
        #expect(wrong.body.contains("does not belong to the sign-in in progress"))
        #expect(wrong.body.contains("still waiting"))
        #expect(!wrong.body.contains("stale"))
        let missing = try await get("/callback?code=x", port: listener.port)
        #expect(missing.status == 400)
        #expect(missing.body.contains("has no state"))
        #expect(try await get("/callback?code=right&state=s-123", port: listener.port).status == 200)
        #expect(try await result.get().code == "right")
    }

    @Test("an identity provider error ends the wait with that error and a failure page, escaped")
    func identityProviderError() async throws {
        let listener = try LoopbackListener(redirectURL: Self.callbackURL)
        async let result = outcome(of: listener)
        let page = try await get(
            "/callback?error=access_denied&error_description=%3Cscript%3Ealert(1)%3C%2Fscript%3E+denied&state=s-123",
            port: listener.port)
        #expect(page.status == 200)
        #expect(page.body.contains("Sign-in failed"))
        #expect(page.body.contains("access_denied"))
        #expect(page.body.contains("&lt;script&gt;alert(1)&lt;/script&gt; denied"))
        #expect(!page.body.contains("<script>"))
        let error = try #require(await result.failure, "the wait should end with the identity provider's error")
        #expect(error.kind == .identityProviderError)
        #expect(error.category == .refused)
        #expect(error.identityProviderErrorCode == "access_denied")
    }

    @Test("an iss that is not the expected issuer ends the wait with an issuer mismatch")
    func issuerMismatch() async throws {
        let listener = try LoopbackListener(redirectURL: Self.callbackURL)
        async let result = outcome(of: listener, issuer: "https://idp.example")
        let page = try await get("/callback?code=c&state=s-123&iss=https%3A%2F%2Fevil.example", port: listener.port)
        #expect(page.body.contains("Sign-in failed"))
        #expect(page.body.contains("https://evil.example"))
        let error = try #require(await result.failure, "the wait should end with an issuer mismatch")
        #expect(error.kind == .issuerMismatch)
    }

    @Test("a logout confirmation (state, no code) completes when no code is required")
    func logoutConfirmation() async throws {
        let listener = try LoopbackListener(redirectURL: Self.callbackURL)
        async let result = outcome(of: listener, requiresCode: false)
        #expect(try await get("/callback?state=s-123", port: listener.port).status == 200)
        #expect(try await result.get().code == nil)
    }

    @Test("POST gets 405, HEAD is answered without ending the wait, a foreign Host gets 421")
    func methodsAndHosts() async throws {
        let listener = try LoopbackListener(redirectURL: Self.callbackURL)
        let port = listener.port
        async let result = outcome(of: listener)
        let post = try await exchange(
            "POST /callback?code=c&state=s-123 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n", port: port)
        #expect(post.status == 405)
        #expect(post.headers["allow"] == "GET, HEAD")
        let head = try await exchange(
            "HEAD /callback?code=c&state=s-123 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", port: port)
        #expect(head.status == 200)
        #expect(head.body.isEmpty)
        let rebound = try await exchange(
            "GET /callback?code=c&state=s-123 HTTP/1.1\r\nHost: evil.example\r\n\r\n", port: port)
        #expect(rebound.status == 421)
        #expect(try await get("/callback?code=real&state=s-123", port: port).status == 200)
        #expect(try await result.get().code == "real")
    }

    // MARK: - Ending

    @Test("cancellation ends the wait at once and frees the port")
    func cancellationFreesPort() async throws {
        let port = try freePort()
        let url = try #require(URL(string: "http://127.0.0.1:\(port)/callback"))
        let listener = try LoopbackListener(redirectURL: url)
        let silent = try TestSocket(port: port)  // A connection in progress must not delay the end.
        silent.send("GET /callback?sta")
        let task = Task { await outcome(of: listener) }
        try await Task.sleep(for: .milliseconds(100))
        task.cancel()
        // Not `.timedOut`: the cancellation, not the wait's own limit, ended it.
        let error = try #require((await task.value).failure, "a cancelled wait should fail")
        #expect(error.kind == .cancelled)
        #expect(error.category == .cancelled)
        // The client's connection was closed too.
        #expect(try await BlockingWork.run { silent.readToEnd().end } != .timedOut)
        // The same port can be bound again right away.
        let again = try LoopbackListener(redirectURL: url)
        #expect(again.port == port)
    }

    @Test("a task cancelled before waiting fails at once and frees the port")
    func cancelledBeforeWaiting() async throws {
        let listener = try LoopbackListener(redirectURL: Self.callbackURL)
        let port = listener.port
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await outcome(of: listener)
        }
        let error = try #require((await task.value).failure, "a cancelled wait should fail")
        #expect(error.kind == .cancelled)
        _ = try LoopbackListener(redirectURL: #require(URL(string: "http://127.0.0.1:\(port)/callback")))
    }

    @Test("close() ends a wait in progress; it is idempotent; waiting again fails")
    func closeWhileWaiting() async throws {
        let listener = try LoopbackListener(redirectURL: Self.callbackURL)
        async let result = outcome(of: listener)
        try await Task.sleep(for: .milliseconds(100))
        listener.close()
        listener.close()
        let error = try #require(await result.failure, "a closed wait should fail")
        #expect(error.kind == .cancelled)
        #expect(throws: TestFailure.self) { try TestSocket(port: listener.port) }
        let again = try #require(await outcome(of: listener).failure, "waiting on a closed listener should fail")
        #expect(again.kind == .cancelled)
    }

    @Test("after the matching response every socket is closed")
    func closedAfterEnd() async throws {
        let listener = try LoopbackListener(redirectURL: Self.callbackURL)
        async let result = outcome(of: listener)
        let bystander = try TestSocket(port: listener.port)
        bystander.send("GET /")
        // Held by the kernel until it says something (TCP_DEFER_ACCEPT), never by the listener.
        let silent = try TestSocket(port: listener.port)
        #expect(try await get("/callback?code=c&state=s-123", port: listener.port).status == 200)
        _ = try await result.get()
        #expect(try await BlockingWork.run { bystander.readToEnd().end } != .timedOut)
        silent.send("x")
        #expect(try await BlockingWork.run { silent.readToEnd().end } == .reset)
        #expect(throws: TestFailure.self) { try TestSocket(port: listener.port) }
    }

    @Test("the wait's own time limit ends it with a timeout that names the redirect URL")
    func waitTimeout() async throws {
        let listener = try LoopbackListener(redirectURL: Self.callbackURL)
        let error = try #require(
            await outcome(of: listener, timeout: .milliseconds(200)).failure, "the wait should time out")
        #expect(error.kind == .timedOut)
        #expect(error.category == .timedOut)
        #expect(error.description.contains("127.0.0.1:\(listener.port)/callback"))
    }

    // MARK: - Hostile clients

    @Test("a silent client does not delay a later real callback")
    func silentClient() async throws {
        // The silent connection would hold a one-at-a-time listener for its whole 60 s time limit; the real
        // callback must be served before that limit ran out for any connection (no time-out counted).
        let configuration = LoopbackListener.Configuration(connectionTimeout: .seconds(60))
        let counts = ServeLoopCounts()
        let listener = try LoopbackListener(
            redirectURL: Self.callbackURL, configuration: configuration, logger: counts.logger)
        async let result = outcome(of: listener)
        let silent = try TestSocket(port: listener.port)
        #expect(try await get("/callback?code=c&state=s-123", port: listener.port).status == 200)
        _ = try await result.get()
        #expect(try counts.statistics().timedOut == 0)
        _ = silent
    }

    @Test("a slowloris client is cut off at the connection time limit while others are served")
    func slowloris() async throws {
        let configuration = LoopbackListener.Configuration(connectionTimeout: .milliseconds(600))
        let counts = ServeLoopCounts()
        let listener = try LoopbackListener(
            redirectURL: Self.callbackURL, configuration: configuration, logger: counts.logger)
        let port = listener.port
        async let result = outcome(of: listener)
        let slow = try TestSocket(port: port)
        let dripped = try await BlockingWork.run { () -> (Int, TestSocket.End) in
            var sent = 0
            for byte in "GET /callback?state=s-123&code=slow HTTP/1.1\r\nHost: 127.0.0.1\r\n".utf8 {
                guard slow.send([byte]) else { return (sent, .reset) }
                sent += 1
                usleep(50_000)
                if sent == 30 { break }
            }
            return (sent, slow.readToEnd().end)
        }
        // The listener closed the connection before it finished its head (30 bytes take 1.5 s).
        #expect(dripped.1 != .timedOut)
        #expect(try await get("/favicon.ico", port: port).status == 404)
        #expect(try await get("/callback?code=fast&state=s-123", port: port).status == 200)
        #expect(try await result.get().code == "fast")
        #expect(try counts.statistics().timedOut >= 1)
    }

    @Test("a head just over the limit gets 431")
    func headTooLarge() async throws {
        let listener = try LoopbackListener(redirectURL: Self.callbackURL)
        async let result = outcome(of: listener)
        let padding = String(repeating: "a", count: 17 * 1024)
        let response = try await exchange("GET /favicon.ico HTTP/1.1\r\nX-Pad: \(padding)\r\n\r\n", port: listener.port)
        #expect(response.status == 431)
        #expect(try await get("/callback?code=c&state=s-123", port: listener.port).status == 200)
        _ = try await result.get()
    }

    @Test("a 1 MB header is cut off (431 or closed) without holding its bytes, and the sign-in completes")
    func megabyteHeader() async throws {
        let counts = ServeLoopCounts()
        let listener = try LoopbackListener(redirectURL: Self.callbackURL, logger: counts.logger)
        let port = listener.port
        async let result = outcome(of: listener)
        let (sentAll, reply) = try await BlockingWork.run { () -> (Bool, [UInt8]) in
            let socket = try TestSocket(port: port)
            let head = "GET /callback?state=s-123&code=big HTTP/1.1\r\nX-Big: " + String(repeating: "b", count: 1 << 20)
            let sentAll = socket.send(head + "\r\n\r\n")
            return (sentAll, socket.readToEnd().bytes)
        }
        // Either the client saw the 431, or the listener had closed before the megabyte was sent.
        #expect(TestResponse(reply)?.status == 431 || !sentAll)
        #expect(try await get("/callback?code=c&state=s-123", port: port).status == 200)
        #expect(try await result.get().code == "c")
        #expect(try counts.statistics().peakHeadBytes <= 16 * 1024)
    }

    @Test("200 silent connections at once do not lock out the real callback")
    func connectionFlood() async throws {
        let counts = ServeLoopCounts()
        let listener = try LoopbackListener(
            redirectURL: Self.callbackURL, configuration: .init(connectionTimeout: .seconds(40)), logger: counts.logger)
        let port = listener.port
        async let result = outcome(of: listener, timeout: .seconds(45))
        let flood = try await BlockingWork.run { try (0..<200).map { _ in try TestSocket(port: port) } }
        #expect(try await get("/callback?code=c&state=s-123", port: port).status == 200)
        #expect(try await result.get().code == "c")
        let statistics = try counts.statistics()
        #expect(statistics.timedOut == 0, "the callback did not wait for a silent connection's time limit")
        #expect(statistics.peakConnections <= 64)
        // Silent connections wait in the kernel (TCP_DEFER_ACCEPT) and take no place in the listener's table.
        #expect(statistics.accepted < 200)
        // None is left hanging once the wait ended: a flood connection was closed, or is reset when it speaks.
        let ends = try await BlockingWork.run {
            flood.map { socket in
                socket.send("x")
                return socket.readToEnd().end
            }
        }
        #expect(!ends.contains(.timedOut))
    }

    @Test("200 requests from 20 parallel clients are all answered, then the callback completes")
    func parallelRequests() async throws {
        let counts = ServeLoopCounts()
        let listener = try LoopbackListener(redirectURL: Self.callbackURL, logger: counts.logger)
        let port = listener.port
        async let result = outcome(of: listener)
        let statuses = try await withThrowingTaskGroup(of: [Int].self) { group in
            for _ in 0..<20 {
                group.addTask {
                    try await BlockingWork.run {
                        try (0..<10).map { _ in
                            let socket = try TestSocket(port: port)
                            socket.send("GET /favicon.ico HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                            return TestResponse(socket.readToEnd().bytes)?.status ?? 0
                        }
                    }
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(statuses.count == 200)
        #expect(statuses.allSatisfy { $0 == 404 })
        #expect(try await get("/callback?code=c&state=s-123", port: port).status == 200)
        #expect(try await result.get().code == "c")
        #expect(try counts.statistics().answered == 201)
    }

    @Test(
        "malformed requests get 400 (or 505) and the sign-in still completes",
        arguments: [
            ("GARBAGE\r\n\r\n", 400), ("GET /callback\r\n\r\n", 400), ("GET  /callback HTTP/1.1\r\n\r\n", 400),
            ("GET /callback HTTP/1.1\r\nNo colon here\r\n\r\n", 400), ("GET /\u{1}x HTTP/1.1\r\n\r\n", 400),
            ("GET /callback HTTP/2.0\r\n\r\n", 505), ("\r\n\r\n", 400),
            ("GET /callback?state=s-123&code=%zz HTTP/1.1\r\n\r\n", 400),
        ])
    func malformedRequests(raw: String, status: Int) async throws {
        let listener = try LoopbackListener(redirectURL: Self.callbackURL)
        async let result = outcome(of: listener)
        #expect(try await exchange(raw, port: listener.port).status == status)
        #expect(try await get("/callback?code=c&state=s-123", port: listener.port).status == 200)
        #expect(try await result.get().code == "c")
    }

    @Test("a client that connects and leaves, or sends binary, does not disturb the wait")
    func abruptClients() async throws {
        let listener = try LoopbackListener(redirectURL: Self.callbackURL)
        let port = listener.port
        async let result = outcome(of: listener)
        try await BlockingWork.run {
            _ = try TestSocket(port: port)  // Connects and closes at once.
            let half = try TestSocket(port: port)
            half.send("GET /callback?state=s-123&co")  // Leaves mid-request.
            let tls = try TestSocket(port: port)
            tls.send([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03])  // A TLS ClientHello.
            var option = linger(l_onoff: 1, l_linger: 0)  // Reset instead of closing.
            let reset = try TestSocket(port: port)
            reset.send("GET /")
            setsockopt(reset.fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
        }
        #expect(try await get("/callback?code=c&state=s-123", port: port).status == 200)
        #expect(try await result.get().code == "c")
    }

    // MARK: - Secrets

    @Test("debug logs never contain the code, the state or the query")
    func noSecretsInLogs() async throws {
        let lines = LogLines()
        let logger = Logger(label: "test") { _ in CapturingLogHandler(storage: lines) }
        let listener = try LoopbackListener(redirectURL: Self.callbackURL, logger: logger)
        async let result = outcome(of: listener, state: "STATE-SECRET-42")
        _ = try await get("/callback?code=CODE-SECRET-1&state=WRONG-STATE-7", port: listener.port)
        _ = try await get("/callback?code=CODE-SECRET-2&state=STATE-SECRET-42", port: listener.port)
        let callback = try await result.get()
        #expect(callback.code == "CODE-SECRET-2")
        let log = lines.text
        #expect(log.contains("accepted"))  // Logging happened at all.
        for secret in ["CODE-SECRET", "STATE-SECRET", "WRONG-STATE", "code="] {
            #expect(!log.contains(secret), "the log contains \(secret)")
        }
    }
}
