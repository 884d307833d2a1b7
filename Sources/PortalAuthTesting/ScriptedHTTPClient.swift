public import Foundation
public import PortalAuth
import Synchronization

/// A `TransportClient` that answers each request from a script instead of the network: for the tests of an app that
/// uses PortalAuth (pass it as `SignInSettings.httpClient` or as any `httpClient:` parameter).
///
/// It counts the requests and keeps them whole, with their form fields, and can hold every answer back for a while
/// (to widen races) or until the test opens a gate.
///
/// ```swift
/// let portal = ScriptedHTTPClient([
///     ScriptedHTTPClient.json(#"{"error":"authorization_pending"}"#, status: 400),
///     ScriptedHTTPClient.tokens("access-1", refresh: "refresh-1"),
/// ])
/// ```
public final class ScriptedHTTPClient: TransportClient {
    /// What the script answers to the request with this index (0-based): a response, or a thrown error (a
    /// a transport error (a `CategorizedError`) for a request that got no answer).
    public typealias Script = @Sendable (_ index: Int, _ request: TransportRequest) throws -> TransportResponse

    private let script: Script
    private let delay: Duration
    private let gate: @Sendable () async -> Void
    private let sent = Mutex<[(request: TransportRequest, at: Date, instant: ContinuousClock.Instant)]>([])

    /// Creates a client that answers with `script`.
    ///
    /// - Parameters:
    ///   - delay: how long each answer takes (a real wait, for races; `.zero` by default).
    ///   - gate: awaited before each answer (to hold it until the test says so).
    ///   - script: the answer (or thrown error) for each request.
    public init(delay: Duration = .zero, gate: @escaping @Sendable () async -> Void = {}, script: @escaping Script) {
        self.delay = delay
        self.gate = gate
        self.script = script
    }

    /// Creates a client that answers every request with `responses` in turn, repeating the last one (an empty list:
    /// a client that must never be used, which stops the test at its first request).
    public convenience init(delay: Duration = .zero, _ responses: [Result<TransportResponse, any Error>]) {
        self.init(delay: delay) { index, request in
            precondition(!responses.isEmpty, "ScriptedHTTPClient without responses got a request to \(request.url)")
            return try responses[min(index, responses.count - 1)].get()
        }
    }

    /// Creates a client whose `respond` gets each request and how many requests came before it.
    public convenience init(respond: @escaping @Sendable (TransportRequest, Int) throws -> TransportResponse) {
        self.init { index, request in try respond(request, index) }
    }

    /// Creates a client that always gives the same answer: `body` with HTTP `status`.
    public convenience init(status: Int = 200, body: String, contentType: String = "application/json") {
        self.init { _, request in
            TransportResponse(
                statusCode: status, headers: [("Content-Type", contentType)], body: Data(body.utf8), url: request.url)
        }
    }

    /// Records the request, waits for the delay and the gate, and returns the script's answer.
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        let index = sent.withLock { list in
            list.append((request, Date(), ContinuousClock.now))
            return list.count - 1
        }
        if delay > .zero { try await Task.sleep(for: delay) }
        await gate()
        return try script(index, request)
    }

    /// The requests sent, whole, in order.
    public var requests: [TransportRequest] { sent.withLock { $0.map(\.request) } }

    /// How many requests were sent.
    public var count: Int { sent.withLock { $0.count } }

    /// When each request arrived (the system clock), in order.
    public var arrivals: [Date] { sent.withLock { $0.map(\.at) } }

    /// The pauses between consecutive requests (the continuous clock).
    public var gaps: [Duration] {
        let instants = sent.withLock { $0.map(\.instant) }
        return zip(instants, instants.dropFirst()).map { $0.duration(to: $1) }
    }

    /// The form fields (`application/x-www-form-urlencoded` body) of each request sent, in order.
    public var forms: [[String: String]] {
        sent.withLock { $0.map(\.request) }.map { request in
            let body = request.body.map { String(decoding: $0, as: UTF8.self) } ?? ""
            var components = URLComponents()
            components.percentEncodedQuery = body.replacingOccurrences(of: "+", with: "%20")
            return Dictionary((components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
        }
    }

    // MARK: - Canned answers

    /// The URL the canned answers below carry (the token endpoint of an identity provider `idp.example`).
    public static let tokenURL = URL(string: "https://idp.example/oauth2/token")!

    /// A JSON answer (`Content-Type: application/json`) with HTTP `status`.
    public static func json(_ text: String, status: Int = 200) -> Result<TransportResponse, any Error> {
        .success(
            TransportResponse(
                statusCode: status, headers: [("Content-Type", "application/json")], body: Data(text.utf8),
                url: tokenURL))
    }

    /// An OAuth 2 token response (RFC 6749 5.1) with a bearer `access` token valid for `expiresIn` seconds; `refresh`
    /// nil leaves `refresh_token` out, `refreshExpiresIn` nil leaves `refresh_token_expires_in` out (ArcGIS sends it).
    public static func tokens(
        _ access: String, refresh: String? = nil, expiresIn: Int = 3600, refreshExpiresIn: Int? = nil
    ) -> Result<TransportResponse, any Error> {
        var object: JSONObject = [
            "access_token": .string(access), "expires_in": .integer(Int64(expiresIn)), "token_type": .string("Bearer"),
        ]
        if let refresh { object["refresh_token"] = .string(refresh) }
        if let refreshExpiresIn { object["refresh_token_expires_in"] = .integer(Int64(refreshExpiresIn)) }
        return json(JSONValue.object(object).serialized(indent: 0))
    }

    /// A request that got no answer (the server cannot be reached), failing as the real client fails.
    public static func unreachable() -> Result<TransportResponse, any Error> { unreachable(.cannotConnect) }

    /// A request that got no answer: the library's transport error of `kind` (timed out, reset, TLS, …).
    package static func unreachable(_ kind: TransportError.Kind) -> Result<TransportResponse, any Error> {
        .failure(TransportError(kind, url: RedactedURL(tokenURL), detail: "scripted"))
    }
}
