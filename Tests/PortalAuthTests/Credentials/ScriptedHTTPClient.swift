import Foundation
import Synchronization
@testable import PortalAuth
@testable import PortalAuthCore
@testable import PortalAuthTransport

/// A test double of `TransportClient`: answers each request from a script, counts the requests and keeps their
/// form fields, and can hold every answer back for a while (to widen races).
final class ScriptedHTTPClient: TransportClient {
    /// What the script answers to the request with this index (0-based).
    typealias Script = @Sendable (_ index: Int, _ request: TransportRequest) throws -> TransportResponse

    private let script: Script
    private let delay: Duration
    private let gate: @Sendable () async -> Void
    private let sent = Mutex<[(request: TransportRequest, at: Date, instant: ContinuousClock.Instant)]>([])

    /// - Parameters:
    ///   - delay: how long each answer takes.
    ///   - gate: awaited before each answer (to hold it until the test says so).
    ///   - script: the answer (or thrown error) for each request.
    init(delay: Duration = .zero, gate: @escaping @Sendable () async -> Void = {}, script: @escaping Script) {
        self.delay = delay
        self.gate = gate
        self.script = script
    }

    /// Answers every request with `responses` in turn, repeating the last one.
    convenience init(delay: Duration = .zero, _ responses: [Result<TransportResponse, any Error>]) {
        self.init(delay: delay) { index, _ in try responses[min(index, responses.count - 1)].get() }
    }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let index = sent.withLock { list in
            list.append((request, Date(), ContinuousClock.now))
            return list.count - 1
        }
        if delay > .zero { try await Task.sleep(for: delay) }
        await gate()
        return try script(index, request)
    }

    /// A client whose `respond` gets each request and how many requests came before it.
    convenience init(respond: @escaping @Sendable (TransportRequest, Int) throws -> TransportResponse) {
        self.init { index, request in try respond(request, index) }
    }

    /// A client that always gives the same answer.
    convenience init(status: Int = 200, body: String, contentType: String = "application/json") {
        self.init { _, request in
            TransportResponse(statusCode: status, headers: [("Content-Type", contentType)], body: Data(body.utf8), url: request.url)
        }
    }

    /// The requests sent, whole, in order.
    var requests: [TransportRequest] { sent.withLock { $0.map(\.request) } }

    /// How many requests were sent.
    var count: Int { sent.withLock { $0.count } }

    /// When each request arrived, in order.
    var arrivals: [Date] { sent.withLock { $0.map(\.at) } }

    /// The pauses between consecutive requests.
    var gaps: [Duration] {
        let instants = sent.withLock { $0.map(\.instant) }
        return zip(instants, instants.dropFirst()).map { $0.duration(to: $1) }
    }

    /// The form fields of each request sent, in order.
    var forms: [[String: String]] {
        sent.withLock { $0.map(\.request) }.map { request in
            let body = request.body.map { String(decoding: $0, as: UTF8.self) } ?? ""
            var components = URLComponents()
            components.percentEncodedQuery = body.replacingOccurrences(of: "+", with: "%20")
            return Dictionary((components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
        }
    }

    // MARK: - Canned answers

    static let tokenURL = URL(string: "https://idp.example/oauth2/token")!

    /// A JSON answer with `status`.
    static func json(_ text: String, status: Int = 200) -> Result<TransportResponse, any Error> {
        .success(TransportResponse(statusCode: status, headers: [("Content-Type", "application/json")], body: Data(text.utf8), url: tokenURL))
    }

    /// A token response; `refreshToken` nil leaves `refresh_token` out.
    static func tokens(_ access: String, refresh: String? = nil, expiresIn: Int = 3600, refreshExpiresIn: Int? = nil) -> Result<TransportResponse, any Error> {
        var object: JSONObject = ["access_token": .string(access), "expires_in": .integer(Int64(expiresIn)), "token_type": .string("Bearer")]
        if let refresh { object["refresh_token"] = .string(refresh) }
        if let refreshExpiresIn { object["refresh_token_expires_in"] = .integer(Int64(refreshExpiresIn)) }
        return json(JSONValue.object(object).serialized(indent: 0))
    }

    /// A transport failure: nothing answered.
    static func unreachable(_ kind: TransportError.Kind = .cannotConnect) -> Result<TransportResponse, any Error> {
        .failure(TransportError(kind, url: RedactedURL(tokenURL), detail: "scripted"))
    }
}
