/// Sends HTTP requests: the seam through which the flows reach the network, and through which tests inject
/// faults.
///
/// `CurlHTTPClient` is the real implementation. An implementation returns every HTTP status as a response
/// (a 500 is a response, not an error) and throws only when no response was received: a `TransportError`,
/// or `CancellationError` when the calling task was cancelled.
public protocol TransportClient: Sendable {
    /// Sends `request` and returns the response.
    func send(_ request: TransportRequest) async throws -> TransportResponse
}
