import PortalAuth

/// `request`'s challenge handler: the `Authenticator`'s answers, with the IAP token kind chosen by
/// `--proxy-token` (or `$PORTAL_AUTH_PROXY_TOKEN`) set on the IAP credentials it signs in, so that a new sign-in sends
/// the same kind of token as the stored ones; without a choice, a new sign-in sends the ID token.
final class ProxyTokenChoosingHandler: ArcGISAuthenticationChallengeHandler, NetworkAuthenticationChallengeHandler,
    Sendable
{
    let authenticator: Authenticator
    let token: IAPTokenInfo.Token?

    init(authenticator: Authenticator, token: IAPTokenInfo.Token?) {
        self.authenticator = authenticator
        self.token = token
    }

    func handleArcGISAuthenticationChallenge(
        _ challenge: ArcGISAuthenticationChallenge
    ) async throws -> ArcGISAuthenticationChallenge.Disposition {
        let disposition = try await authenticator.handleArcGISAuthenticationChallenge(challenge)
        if case .continueWithCredential(let credential) = disposition, let token {
            credential.kind.iap?.sendToProxyForThisProcess(token)
        }
        return disposition
    }

    func handleNetworkAuthenticationChallenge(
        _ challenge: NetworkAuthenticationChallenge
    ) async -> NetworkAuthenticationChallenge.Disposition {
        await authenticator.handleNetworkAuthenticationChallenge(challenge)
    }
}
