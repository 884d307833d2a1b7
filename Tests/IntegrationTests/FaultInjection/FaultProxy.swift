import Foundation
import Testing
import TestSupport
@testable import PortalAuth

/// `Tests/Fakes/fault_proxy.py` in front of the test authorization server: forwards everything, and breaks the
/// next token requests in the way asked (`arm`). It stops with `stop()`, and by itself when this process dies.
final class FaultProxy: Sendable {
    private let server: TestServerProcess
    /// `http://127.0.0.1:PORT`.
    let base: String

    /// Starts the proxy in front of `upstream`, waiting for it off the cooperative pool.
    static func start(upstream: String) async throws -> FaultProxy {
        try await BlockingWork.run {
            try FaultProxy(
                server: TestServerProcess.fake("fault_proxy.py", ["--upstream", upstream, "--lifetime", "600"]))
        }
    }

    private init(server: TestServerProcess) throws {
        self.server = server
        base = try server.announcedBase()
    }

    /// The proxy's counters: token requests seen and broken.
    struct State {
        let tokenRequests: Int
        let faulted: Int
    }

    /// Breaks the next `count` token requests (-1: all until `clear()`) in `mode`; `stall` and `slow` last `seconds`;
    /// `value` is the JSON text `expires-in` puts in the answer.
    func arm(_ mode: String, count: Int = -1, seconds: Int = 30, value: String = "null") async throws {
        try await control(
            .post,
            body: #"{"mode": "\#(mode)", "count": \#(count), "seconds": \#(seconds), "value": \#(value)}"#)
    }

    /// Back to forwarding everything; returns the counters.
    @discardableResult
    func clear() async throws -> State { try await control(.delete) }

    func state() async throws -> State { try await control(.get) }

    @discardableResult
    private func control(_ method: TransportRequest.Method, body: String? = nil) async throws -> State {
        let request = TransportRequest(
            method: method, url: URL(string: "\(base)/__fault__")!, headers: [("Content-Type", "application/json")],
            body: Data((body ?? "").utf8))
        let response = try await CurlHTTPClient().send(request)
        try #require(response.statusCode == 200, "fault proxy control: HTTP \(response.statusCode)")
        let json = try JSONValue.parse(response.body)
        return State(
            tokenRequests: Int(json["token_requests"]?.integerValue ?? -1),
            faulted: Int(json["faulted"]?.integerValue ?? -1))
    }

    func stop() {
        server.stop()
    }
}

/// A test failure with a message.
struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension TestServer {
    /// The same server seen through `proxy`: the portal URL on the proxy's port.
    func through(_ proxy: FaultProxy) -> TestServer {
        TestServer(
            base: proxy.base, portal: portal.replacingOccurrences(of: base, with: proxy.base), clientID: clientID,
            iapConfig: iapConfig, iapURL: iapURL, browser: browser, issuer: issuer, testControl: testControl)
    }
}
