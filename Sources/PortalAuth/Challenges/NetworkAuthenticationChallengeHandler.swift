/// Answers network authentication challenges (HTTP Basic/Digest/NTLM/Negotiate, client certificates, untrusted
/// servers) for an `AuthenticationManager`: set it as `networkAuthenticationChallengeHandler`, or use
/// `handleChallenges(using:)`.
///
/// Challenges are raised one at a time: a handler is never asked twice at once by the same manager, and a request
/// the handler itself sends through that manager's `data(for:)` must not be challenged (it would wait for the
/// handler); send such requests with an `TransportClient` directly, as the credentials' own factories do.
public protocol NetworkAuthenticationChallengeHandler: Sendable {
    /// Decides how the challenged request goes on.
    func handleNetworkAuthenticationChallenge(
        _ challenge: NetworkAuthenticationChallenge
    ) async -> NetworkAuthenticationChallenge.Disposition
}
