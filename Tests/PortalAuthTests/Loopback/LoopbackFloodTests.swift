import Foundation
import Glibc
import Testing
@testable import PortalAuth
@testable import PortalAuthCore

/// Another local process floods the loopback port with silent connections while the browser's redirect arrives:
/// the sign-in must still complete (issue 12, item 3).
@Suite("Loopback listener under a connection flood")
struct LoopbackFloodTests {
    private static let callbackURL = URL(string: "http://127.0.0.1/callback")!

    @Test("the browser's request gets through a flood of silent strangers, every time", .timeLimit(.minutes(3)))
    func floodDoesNotEvictTheBrowser() async throws {
        for round in 1...8 {
            let counts = ServeLoopCounts()
            let listener = try LoopbackListener(redirectURL: Self.callbackURL, logger: counts.logger)
            let port = listener.port
            async let result = outcome(of: listener, timeout: .seconds(60))
            // Strangers connect and say nothing: 300 before the browser and 300 after it, far more than the
            // listener keeps open at once (64), so it must make room while the browser's request is waiting.
            let (strangers, browser) = try await BlockingWork.run { () -> ([TestSocket], TestSocket) in
                var sockets: [TestSocket] = []
                for _ in 0..<300 { sockets.append(try TestSocket(port: port, timeout: .seconds(60))) }
                let browser = try TestSocket(port: port, timeout: .seconds(60))
                browser.send(
                    "GET /callback?code=round-\(round)&state=s-123 HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
                for _ in 0..<300 {
                    // the wait ended
                    guard let socket = try? TestSocket(port: port, timeout: .seconds(60)) else { break }
                    sockets.append(socket)
                }
                return (sockets, browser)
            }
            let answer = try await BlockingWork.run { browser.readToEnd() }
            let callback = await result
            #expect(
                String(decoding: answer.bytes, as: UTF8.self).hasPrefix("HTTP/1.1 200"),
                "round \(round): the browser got its page")
            #expect(callback.failure == nil, "round \(round): \(String(describing: callback.failure))")
            #expect((try? callback.get().code) == "round-\(round)")
            #expect(try counts.statistics().peakConnections <= 64, "the cap still holds")
            _ = strangers
        }
    }

    /// Issue 43 item 7: a local process floods the port (half silent connections, half unfinished request lines)
    /// while both cores are busy, and the browser — connected before the flood, its request delayed by the busy
    /// machine — sends its request only once the flood has filled the listener's table several times over. The old
    /// rule (make room by closing the oldest silent connection) closed the browser's connection in every round.
    @Test(
        "a browser connected before a flood that fills the table sends its request after it and gets its page, every time",
        .timeLimit(.minutes(3)))
    func browserConnectedBeforeTheFloodGetsItsPage() async throws {
        let load = try BusyCores(count: 2)
        defer { load.stop() }
        for round in 1...6 {
            let counts = ServeLoopCounts()
            let listener = try LoopbackListener(
                redirectURL: Self.callbackURL, configuration: .init(maximumConnections: 16), logger: counts.logger)
            let port = listener.port
            async let result = outcome(of: listener, timeout: .seconds(60))
            let (answer, probe) = try await BlockingWork.run { () -> (TestSocket.Reading, TestSocket.Reading) in
                let browser = try TestSocket(port: port, timeout: .seconds(60))
                var strangers: [TestSocket] = []
                for index in 0..<64 {
                    let stranger = try TestSocket(port: port, timeout: .seconds(60))
                    if index.isMultiple(of: 2) { stranger.send("GET /callback?code=stranger-\(index)&sta") }
                    strangers.append(stranger)
                }
                // Connections are accepted in the order they were made: once a request sent after the flood is
                // answered, the listener has taken in (and made room for) every connection before it.
                let barrier = try TestSocket(port: port, timeout: .seconds(60))
                barrier.send("GET /favicon.ico HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
                let probe = barrier.readToEnd()
                browser.send(
                    "GET /callback?code=round-\(round)&state=s-123 HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
                let answer = browser.readToEnd()
                withExtendedLifetime(strangers) {}
                return (answer, probe)
            }
            // A browser cut off never comes back: the wait ends here instead of at its time limit.
            if !String(decoding: answer.bytes, as: UTF8.self).hasPrefix("HTTP/1.1 200") { listener.close() }
            let callback = await result
            #expect(
                String(decoding: probe.bytes, as: UTF8.self).hasPrefix("HTTP/1.1 404"),
                "round \(round): the request after the flood was answered")
            #expect(
                String(decoding: answer.bytes, as: UTF8.self).hasPrefix("HTTP/1.1 200"),
                "round \(round): the browser's connection was closed (\(answer.end)) instead of answered")
            #expect(callback.failure == nil, "round \(round): \(String(describing: callback.failure))")
            #expect((try? callback.get().code) == "round-\(round)")
            #expect(try counts.statistics().peakConnections <= 17, "the cap (and one answered request) still holds")
        }
    }
}
