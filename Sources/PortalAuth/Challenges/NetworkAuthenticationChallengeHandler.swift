/// Answers network authentication challenges (HTTP Basic/Digest/NTLM/Negotiate, client certificates, untrusted
/// servers) for an `AuthenticationManager`: set it as `networkAuthenticationChallengeHandler`, or use
/// `handleChallenges(using:)`.
///
/// Challenges are raised one at a time: a handler is never asked twice at once by the same manager.
public protocol NetworkAuthenticationChallengeHandler: Sendable {
    /// Decides how the challenged request goes on.
    func handleNetworkAuthenticationChallenge(
        _ challenge: NetworkAuthenticationChallenge
    ) async -> NetworkAuthenticationChallenge.Disposition
}
