import Foundation

/// The real `TransportClient`: libcurl (OpenSSL flavour). Every request of the process runs on one event loop
/// (`CurlMultiLoop`: one thread, one `curl_multi` handle), which reuses connections and TLS sessions, speaks HTTP/2
/// where offered, and reads the CA bundle once; the Swift cooperative pool is never blocked.
///
/// - TLS verification of peer and host is always on; `TransportConfiguration.TLS` chooses the CA bundle.
/// - Plain `http` is refused before any connection unless the host is loopback.
/// - Proxies come from the environment (see `TransportConfiguration`).
/// - Cancelling the calling task removes its transfer from the loop at once and throws `CancellationError`.
package struct CurlHTTPClient: TransportClient {
    /// The settings used for every request.
    public var configuration: TransportConfiguration
    /// The CA stores the client's connections share: the process's, but in tests that count their loads.
    let caStores: CAStoreCache

    /// Creates a client.
    public init(configuration: TransportConfiguration = TransportConfiguration()) {
        self.init(configuration: configuration, caStores: .shared)
    }

    /// Creates a client whose connections take their CA stores from `caStores`.
    init(configuration: TransportConfiguration, caStores: CAStoreCache) {
        self.configuration = configuration
        self.caStores = caStores
    }

    /// Sends `request`, following redirects hop by hop when `configuration.followRedirects` is set.
    ///
    /// - Throws: a transport error (a `CategorizedError`) when no response was received, `CancellationError` when cancelled.
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        var deadline = ContinuousClock.now + configuration.timeouts.total
        if let limit = request.timeLimit { deadline = min(deadline, ContinuousClock.now + limit) }
        if let overall = configuration.deadline {
            guard ContinuousClock.now < overall else {
                throw TransportError(
                    .timedOut, url: RedactedURL(request.url),
                    detail: "the time limit of the whole operation passed before this request")
            }
            if !request.outlastsDeadline { deadline = min(deadline, overall) }
        }
        var current = request
        var redirects = 0
        while true {
            let response = try await sendOnce(current, deadline: deadline)
            guard configuration.followRedirects, let next = try Self.redirect(after: response, of: current) else {
                return response
            }
            redirects += 1
            guard redirects <= configuration.maxRedirects else {
                throw TransportError(
                    .tooManyRedirects, url: RedactedURL(request.url),
                    detail: "more than \(configuration.maxRedirects) redirects, the last to \(RedactedURL(next.url))")
            }
            current = next
        }
    }

    // MARK: - One hop

    private func sendOnce(_ request: TransportRequest, deadline: ContinuousClock.Instant) async throws
        -> TransportResponse
    {
        try Task.checkCancellation()
        let target = try RequestTarget.checked(request.url)
        try Self.validateHeaders(of: request)
        let loop = try CurlMultiLoop.shared(for: request.url)
        let transfer = try CurlTransfer(
            request: request, target: target, configuration: configuration, deadline: deadline,
            easy: try loop.handle(for: request.url), caStores: caStores)
        return try await loop.run(transfer)
    }

    /// Refuses header fields that would split the request (CR, LF or NUL) or have an empty name.
    private static func validateHeaders(of request: TransportRequest) throws(TransportError) {
        // Bytes, not Characters: "\r\n" is one Character and would slip past a Character test.
        func forbidden(_ byte: UInt8) -> Bool { byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\n") || byte == 0 }
        for field in request.headers {
            let badName =
                field.name.isEmpty
                || field.name.utf8.contains { forbidden($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: " ") }
            if badName || field.value.utf8.contains(where: forbidden) {
                let shown = badName ? "a header field name" : "the header field \(field.name)"
                throw TransportError(
                    .invalidHeader, url: RedactedURL(request.url),
                    detail: "\(shown) contains a line break, NUL, colon or space")
            }
        }
    }

    // MARK: - Redirects

    /// `url` without `token` query parameters (an ArcGIS token placed as a parameter).
    private static func removingTokenParameters(from url: URL) -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let items = components.percentEncodedQueryItems, items.contains(where: { $0.name.lowercased() == "token" })
        else { return url }
        let kept = items.filter { $0.name.lowercased() != "token" }
        components.percentEncodedQueryItems = kept.isEmpty ? nil : kept
        return components.url ?? url
    }

    /// The request to send after `response`, or `nil` when it is not a redirect.
    ///
    /// 303, and 301/302 after a POST, become a GET without body (as browsers and curl do); 307/308 keep the
    /// method and body. Leaving the origin drops the credentials, the `Authorization`, `X-Esri-Authorization`,
    /// `Proxy-Authorization` and `Cookie` fields and `token` query parameters, and is refused when a body would be
    /// sent again (307, 308); https → http is refused.
    package static func redirect(after response: TransportResponse, of request: TransportRequest) throws(TransportError)
        -> TransportRequest?
    {
        guard [301, 302, 303, 307, 308].contains(response.statusCode) else { return nil }
        let from = RedactedURL(request.url)
        guard let location = response.headers["Location"],
            let next = URL(string: location, relativeTo: request.url)?.absoluteURL
        else {
            throw TransportError(
                .invalidRedirect, url: from, detail: "HTTP \(response.statusCode) without a usable Location")
        }
        if request.url.scheme?.lowercased() == "https" && next.scheme?.lowercased() != "https" {
            throw TransportError(
                .invalidRedirect, url: from, detail: "to \(RedactedURL(next)): https must not redirect to http")
        }
        var redirected = request
        redirected.url = next
        if response.statusCode == 303 || (request.method == .post && [301, 302].contains(response.statusCode)) {
            redirected.method = request.method == .head ? .head : .get
            redirected.body = nil
            redirected.headers.remove(name: "Content-Type")
            redirected.headers.remove(name: "Content-Length")
        }
        let sameOrigin =
            request.url.scheme?.lowercased() == next.scheme?.lowercased()
            && request.url.host?.lowercased() == next.host?.lowercased() && request.url.port == next.port
        if !sameOrigin {
            // Credentials never follow a redirect to another origin, wherever they are placed. A body that would be
            // sent again (307, 308) may carry one (`token=`, a password, a refresh token): such a redirect is not
            // followed, since the body cannot be told apart from a credential.
            if let body = redirected.body, !body.isEmpty {
                throw TransportError(
                    .invalidRedirect, url: from,
                    detail:
                        "HTTP \(response.statusCode) to another origin (\(RedactedURL(next))) would send the request body there again, "
                        + "and it may hold a credential; not followed. Send the request to \(RedactedURL(next)) directly if it is meant for it"
                )
            }
            redirected.credentials = TransportCredentials()
            redirected.headers.remove(name: "Authorization")
            redirected.headers.remove(name: "Cookie")
            redirected.headers.remove(name: "X-Esri-Authorization")
            redirected.headers.remove(name: "Proxy-Authorization")
            redirected.url = Self.removingTokenParameters(from: next)
        }
        return redirected
    }
}

/// Sends HTTP requests: the seam through which the flows reach the network, and through which tests inject
/// faults.
///
/// The library has the real implementation (libcurl, the default of `SignInSettings.httpClient`). An implementation returns every HTTP status as a response
/// (a 500 is a response, not an error) and throws only when no response was received: a transport error (a `CategorizedError`),
/// or `CancellationError` when the calling task was cancelled.
public protocol TransportClient: Sendable {
    /// Sends `request` and returns the response.
    func send(_ request: TransportRequest) async throws -> TransportResponse
}
