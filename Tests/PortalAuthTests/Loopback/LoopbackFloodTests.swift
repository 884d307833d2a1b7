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
}
