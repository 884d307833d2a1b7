/// Answers ArcGIS authentication challenges (OAuth, ArcGIS token, Identity-Aware Proxy) for an
/// `AuthenticationManager`: set it as `arcGISAuthenticationChallengeHandler`, or use `handleChallenges(using:)`.
///
/// Challenges are raised one at a time: a handler is never asked twice at once by the same manager, and a request
/// the handler itself sends through that manager's `data(for:)` must not be challenged (it would wait for the
/// handler); send such requests with an `TransportClient` directly, as the credentials' own factories do.
///
/// Its one requirement is the ArcGIS Maps SDK's, so a `@MainActor final class` (as the toolkit's `Authenticator`)
/// conforms. The manager learns which hosts sit behind an Identity-Aware Proxy from the IAP credentials in its
/// store and from `AuthenticationManager.iapConfigurations`, not from the handler (see `data(for:)` for the
/// sign-in requests it recognises from any proxy).
public protocol ArcGISAuthenticationChallengeHandler: Sendable {
    /// Decides how the challenged request goes on; a thrown error fails the request with that error.
    func handleArcGISAuthenticationChallenge(
        _ challenge: ArcGISAuthenticationChallenge
    ) async throws -> ArcGISAuthenticationChallenge.Disposition
}
