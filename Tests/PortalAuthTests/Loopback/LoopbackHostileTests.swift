import Foundation
import Glibc
import Synchronization
import Testing
@testable import PortalAuth
@testable import PortalAuthCore

/// Hostile clients beyond `LoopbackListenerTests`: many at once and of every kind, wrong callbacks in every
/// flavour before the right one, malformed request lines. Bounds are the listener's own counts, never wall time or
/// resident memory (which a loaded machine or another test moves).
@Suite("Loopback listener under attack", .timeLimit(.minutes(1)))
struct LoopbackHostileTests {
    static let callbackURL = URL(string: "http://127.0.0.1/callback")!

    // MARK: - Everything at once

    /// 200 connections at once: 50 trickle their head a byte at a time (slowloris), 50 send an oversized header (16 of
    /// them 1 MB, the others 20 kB), 50 send garbage, 50 send callbacks of other sign-ins. The right callback still
    /// completes before any attacker's 40 s connection limit ran out (no connection timed out), and the listener never
    /// holds more than one head's worth of bytes per connection nor more than its connection cap.
    @Test("200 hostile connections at once: the sign-in completes, buffers stay bounded")
    func hostileMix() async throws {
        let counts = ServeLoopCounts()
        let listener = try LoopbackListener(
            redirectURL: Self.callbackURL, configuration: .init(connectionTimeout: .seconds(40)), logger: counts.logger)
        let port = listener.port
        async let result = outcome(of: listener, timeout: .seconds(45))

        // One request of 1 MB, shared: the clients themselves allocate next to nothing.
        let bigRequest =
            Array("GET /callback?state=s-123&code=big HTTP/1.1\r\nX-Big: ".utf8)
            + [UInt8](repeating: UInt8(ascii: "b"), count: 1 << 20)
        let largeRequest = Array(bigRequest.prefix(20 * 1024))
        // All 200 stay connected together. The oversized ones come last, so that they push idle ones out under the
        // connection cap instead of being pushed out themselves.
        let attack = try await BlockingWork.run { () -> [TestSocket] in
            func connect(_ first: [UInt8]) throws -> TestSocket {
                let socket = try TestSocket(port: port, timeout: .seconds(2))
                socket.send(first)
                return socket
            }
            let slow = try (0..<50).map { _ in try connect(Array("G".utf8)) }  // Slowloris: the rest trickles below.
            let garbage = try (0..<50).map { index in
                try connect([UInt8](repeating: UInt8(truncatingIfNeeded: index &* 37), count: 700) + [13, 10, 13, 10])
            }
            let stolen = try (0..<50).map { index in
                try connect(
                    Array("GET /callback?state=other-\(index)&code=stolen HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
            }
            let oversized = try (0..<50).map { index in try connect(index < 16 ? bigRequest : largeRequest) }
            for byte in "ET /callback?state=s-123&code=slow".utf8.prefix(10) {
                for socket in slow { socket.send([byte]) }
                usleep(100_000)
            }
            return slow + garbage + stolen + oversized
        }
        #expect(attack.count == 200)

        #expect(try await get("/callback?code=right&state=s-123", port: port).status == 200)
        #expect(try await result.get().code == "right")

        let statistics = try counts.statistics()
        #expect(statistics.peakHeadBytes <= 16 * 1024)
        #expect(statistics.peakConnections <= 64)
        #expect(statistics.accepted >= 200)
        #expect(statistics.timedOut == 0, "the callback did not wait for an attacker's time limit")
        // Every attacker was disconnected by the listener (evicted, answered or closed at the end), none left hanging.
        let ends = try await BlockingWork.run { attack.map { $0.readToEnd().end } }
        #expect(!ends.contains(.timedOut))
    }

    // MARK: - Wrong callbacks first

    /// Requests that must be answered without ending the wait, in the order a confused browser or an attacker could
    /// send them, each with the status it gets.
    static let wrongBeforeRight: [(request: String, status: Int)] = [
        ("GET /callback HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400),  // No state at all.
        ("GET /callback?code=c HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400),  // A code without state.
        ("GET /callback?state=s-123&state=s-123&code=c HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400),  // Repeated state.
        ("GET /callback?state=s-122&code=c HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400),  // An earlier attempt's state.
        ("GET /callback?state=S-123&code=c HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400),  // State case differs.
        ("GET /callback?state=s-1234&code=c HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400),  // A longer state.
        // Error, wrong state.
        ("GET /callback?error=access_denied&state=other HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400),
        ("GET /callback?code=c&state=other&iss=https%3A%2F%2Fevil HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400),
        ("GET /Callback?state=s-123&code=c HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 404),  // Paths are case-sensitive.
        ("GET /callback/?state=s-123&code=c HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 404),
        ("GET /?state=s-123&code=c HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 404),
        ("POST /callback?state=s-123&code=c HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n", 405),
        ("HEAD /callback?state=s-123&code=c HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 200),  // HEAD never ends the wait.
        ("GET /callback?state=s-123&code=c HTTP/1.1\r\nHost: attacker.example\r\n\r\n", 421),  // DNS rebinding.
        ("GET /callback?state=s-123&code=c HTTP/1.1\r\nHost: 127.0.0.1.attacker.example\r\n\r\n", 421),
        ("GET /callback?state=s-123&code=%ZZ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400),  // Broken escape.
        ("GET /callback?state=s-123&code=%C3%28 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400),  // Not UTF-8.
    ]

    @Test(
        "17 wrong requests (states, paths, methods, hosts, escapes) keep the wait going; then the right one completes")
    func wrongStatesThenRight() async throws {
        let counts = ServeLoopCounts()
        let listener = try LoopbackListener(redirectURL: Self.callbackURL, logger: counts.logger)
        async let result = outcome(of: listener)
        for (request, status) in Self.wrongBeforeRight {
            let response = try await exchange(request, port: listener.port)
            #expect(response.status == status, "\(request.prefix(60).debugDescription)")
        }
        #expect(try await get("/callback?code=right&state=s-123", port: listener.port).status == 200)
        #expect(try await result.get().code == "right")
        #expect(try counts.statistics().answered == Self.wrongBeforeRight.count + 1)
    }

    // MARK: - Malformed request lines

    @Test(
        "more malformed request lines get 400, 431 or 505 and the sign-in still completes",
        arguments: [
            ("GET /callback?state=s-123&code=c HTTP/1.1\r\nHost: 127.0.0.1\r\n\u{0}\r\n\r\n", 400),  // NUL line.
            ("GET /callback?state=s-123&code=c\rHTTP/1.1\r\n\r\n", 400),  // Lone CR.
            ("GET\t/callback?state=s-123&code=c HTTP/1.1\r\n\r\n", 400),  // Tab as separator.
            ("GET /callback?state=s-123&code=c HTTP/1.1 extra\r\n\r\n", 400),  // Four parts.
            ("G(T /callback?state=s-123&code=c HTTP/1.1\r\n\r\n", 400),  // Not a token.
            ("GET /callback?state=s-123&code=c http/1.1\r\n\r\n", 400),  // Lower-case version.
            ("GET /callback?state=s-123&code=c HTTP/1.10\r\n\r\n", 400),
            ("GET /callback?state=s-123&code=c HTTP/9.9\r\n\r\n", 505),
            ("GET /callback?state=s-123&code=c HTTP/1.1\r\n: no-name\r\n\r\n", 400),  // Header without a name.
            ("GET /callback?state=s-123&code=c HTTP/1.1\r\nHost : 127.0.0.1\r\n\r\n", 400),  // Space before colon.
            ("GET /callback?state=s-123&code=c HTTP/1.1\r\nX: a\r\n folded\r\n\r\n", 400),  // Obsolete folding.
            ("\r\n\r\nGET /callback?state=s-123&code=c HTTP/1.1\r\n\r\n", 400),  // Two empty lines first.
            ("GET /" + String(repeating: "a", count: 17_000) + " HTTP/1.1\r\n\r\n", 431),  // A 17 kB request line.
            (
                "GET /callback?state=s-123&code=c HTTP/1.1\r\n" + String(repeating: "X: y\r\n", count: 3_000) + "\r\n",
                431
            ),
        ])
    func malformedRequestLines(raw: String, status: Int) async throws {
        let listener = try LoopbackListener(redirectURL: Self.callbackURL)
        async let result = outcome(of: listener)
        #expect(try await exchange(raw, port: listener.port).status == status)
        #expect(try await get("/callback?code=right&state=s-123", port: listener.port).status == 200)
        #expect(try await result.get().code == "right")
    }

    // MARK: - Slow clients

    @Test("50 slowloris clients trickling a byte every 100 ms do not delay the sign-in, and are cut off at its end")
    func slowlorisCrowd() async throws {
        let counts = ServeLoopCounts()
        let listener = try LoopbackListener(
            redirectURL: Self.callbackURL, configuration: .init(connectionTimeout: .seconds(40)), logger: counts.logger)
        let port = listener.port
        async let result = outcome(of: listener, timeout: .seconds(45))
        // All connected before the callback comes, however slowly this machine runs.
        let sockets = try await BlockingWork.run {
            try (0..<50).map { _ in try TestSocket(port: port, timeout: .seconds(3)) }
        }
        let trickled = Task {
            try await BlockingWork.run { () -> [TestSocket.End] in
                var open = sockets.map { _ in true }
                // Up to 5 s of trickling; a socket the listener closed stops taking bytes.
                for byte in Array("GET /callback?state=s-123&code=slow HTTP/1.1\r\nHost: 127.0.0.1\r\n".utf8).prefix(50)
                {
                    for (index, socket) in sockets.enumerated() where open[index] { open[index] = socket.send([byte]) }
                    if !open.contains(true) { break }
                    usleep(100_000)
                }
                return sockets.map { $0.readToEnd().end }
            }
        }
        try await Task.sleep(for: .milliseconds(500))
        #expect(try await get("/callback?code=fast&state=s-123", port: port).status == 200)
        #expect(try await result.get().code == "fast")
        #expect(try counts.statistics().timedOut == 0, "the callback did not wait for a trickling client's time limit")
        // The wait's end closed every trickling connection: none is left waiting for an answer.
        let ends = try await trickled.value
        #expect(!ends.contains(.timedOut))
        #expect(try counts.statistics().peakHeadBytes <= 16 * 1024)
    }

}
