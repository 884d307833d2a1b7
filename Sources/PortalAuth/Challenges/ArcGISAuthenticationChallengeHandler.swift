/// Answers ArcGIS authentication challenges (OAuth, ArcGIS token, Identity-Aware Proxy) for an
/// `AuthenticationManager`: set it as `arcGISAuthenticationChallengeHandler`, or use `handleChallenges(using:)`.
///
/// Challenges are raised one at a time: a handler is never asked twice at once by the same manager, and a request
/// the handler itself sends through that manager's `data(for:)` must not be challenged (it would wait for the
/// handler); send such requests with an `HTTPClient` directly, as the credentials' own factories do.
public protocol ArcGISAuthenticationChallengeHandler: Sendable {
    /// Decides how the challenged request goes on; a thrown error fails the request with that error.
    func handleArcGISAuthenticationChallenge(
        _ challenge: ArcGISAuthenticationChallenge
    ) async throws -> ArcGISAuthenticationChallenge.Disposition
}
