import Foundation
import Synchronization
@testable import PortalAuth

/// An `HTTPClient` that answers from a script and records every request: the seam for token-service tests.
final class ScriptedHTTPClient: HTTPClient {
    private let answer: @Sendable (HTTPRequest, Int) throws -> HTTPResponse
    private let delay: @Sendable (Int) -> Duration
    private let recorded = Mutex<[HTTPRequest]>([])

    /// `answer` gets each request and its 0-based index; `delay` says how long the answer to each index takes.
    init(delay: @escaping @Sendable (Int) -> Duration = { _ in .zero }, _ answer: @escaping @Sendable (HTTPRequest, Int) throws -> HTTPResponse) {
        self.delay = delay
        self.answer = answer
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let index = recorded.withLock { list in
            list.append(request)
            return list.count - 1
        }
        let wait = delay(index)
        if wait > .zero { try await Task.sleep(for: wait) }
        return try answer(request, index)
    }

    /// The requests sent so far.
    var requests: [HTTPRequest] { recorded.withLock { $0 } }
}

extension HTTPResponse {
    /// A JSON response with HTTP `status` (200 by default: ArcGIS errors come as 200).
    static func json(_ text: String, status: Int = 200, for request: HTTPRequest) -> HTTPResponse {
        HTTPResponse(statusCode: status, headers: [("Content-Type", "application/json")], body: Data(text.utf8), url: request.url)
    }
}

extension HTTPRequest {
    /// The form fields of the body, decoded, in order.
    var formFields: [(String, String)] {
        let text = String(decoding: body ?? Data(), as: UTF8.self)
        return text.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
            }
            return (parts[0], parts.count > 1 ? parts[1] : "")
        }
    }

    /// The value of form field `name`.
    func formField(_ name: String) -> String? {
        formFields.first { $0.0 == name }?.1
    }
}

/// A clock the test moves.
final class TestClock: Sendable {
    private let current: Mutex<Date>

    init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        current = Mutex(start)
    }

    var now: Date { current.withLock { $0 } }

    func advance(by seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }
}
