/// What an IAP logout achieved, step by step: a provider can end the browser session and still refuse to revoke
/// the tokens (many refuse RFC 7009 revocation from public clients with HTTP 401), so each is reported on its own.
package struct IAPLogoutResult: Sendable {
    /// What became of the refresh token at the provider's revocation endpoint.
    public enum Revocation: Sendable, Equatable {
        /// The provider advertises no `revocation_endpoint` (Microsoft Entra ID has none): nothing was tried.
        case notOffered
        /// The revocation endpoint accepted the refresh token: the tokens no longer work.
        case revoked
        /// The revocation endpoint refused or failed; the message says why (never a token). The tokens stay usable
        /// until they expire.
        case failed(String)
    }

    /// Whether the identity provider redirected back with the logout's `state`, which confirms that it ended the
    /// browser session.
    public var isSessionEndConfirmed: Bool
    /// What became of the tokens.
    public var revocation: Revocation

    /// Creates a result.
    public init(isSessionEndConfirmed: Bool, revocation: Revocation) {
        self.isSessionEndConfirmed = isSessionEndConfirmed
        self.revocation = revocation
    }

    /// Whether the tokens are known to be dead or no revocation was possible, and the session end was confirmed.
    public var isComplete: Bool {
        if case .failed = revocation { return false }
        return isSessionEndConfirmed
    }
}
