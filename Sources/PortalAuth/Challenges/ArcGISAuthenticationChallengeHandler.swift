/// Answers ArcGIS authentication challenges (OAuth, ArcGIS token, Identity-Aware Proxy) for an
/// `AuthenticationManager`: set it as `arcGISAuthenticationChallengeHandler`, or use `handleChallenges(using:)`.
///
/// Challenges are raised one at a time: a handler is never asked twice at once by the same manager, and a request
/// the handler itself sends through that manager's `data(for:)` must not be challenged (it would wait for the
/// handler); send such requests with an `TransportClient` directly, as the credentials' own factories do.
public protocol ArcGISAuthenticationChallengeHandler: Sendable {
    /// Decides how the challenged request goes on; a thrown error fails the request with that error.
    func handleArcGISAuthenticationChallenge(
        _ challenge: ArcGISAuthenticationChallenge
    ) async throws -> ArcGISAuthenticationChallenge.Disposition

    /// The IAP configurations the handler signs in with: the manager treats their hosts' redirects to the
    /// identity provider as IAP challenges. None by default (the `Authenticator` gives its `iapConfigurations`).
    var iapConfigurations: [IAPConfiguration] { get }
}

extension ArcGISAuthenticationChallengeHandler {
    /// None: a handler that signs in to IAPs of its own says which by implementing this.
    public var iapConfigurations: [IAPConfiguration] { [] }
}
