public import Foundation

/// What an IAP logout ended and what it left valid, step by step: a provider can end the browser session and still
/// refuse to revoke the tokens (many refuse RFC 7009 revocation from public clients with HTTP 401), and where no
/// browser can be used the tokens are revoked while the browser session stays, so each is reported on its own.
///
/// `IAPCredential.logOut(settings:)` returns it; `SignOutReport.Entry.logoutResult` carries it for every IAP
/// sign-in of `AuthenticationManager.signOutReport()`.
///
/// What counts as the provider's confirmation that the session ended: it sent the browser back to the loopback
/// redirect with the logout's `state` (OpenID Connect RP-Initiated Logout: it handled this logout request, with the
/// sign-in's ID token as `id_token_hint` when one is held) and, where it offers a way to ask (a `userinfo_endpoint`
/// in its discovery document, and an access token not yet expired), it refuses the sign-in's access token there
/// afterwards. A provider that returns to the loopback while the sign-in's access token still works at UserInfo gave
/// no evidence of an ended session (LemonLDAP::NG returns so when the browser does not hold its session cookie):
/// that is not a confirmation.
public struct IAPLogoutResult: Sendable {
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

    /// Whether the identity provider confirmed that it ended the session (see the type's description).
    public var isSessionEndConfirmed: Bool
    /// What became of the tokens.
    public var revocation: Revocation
    /// Why no browser logout ran (no browser here can reach the person and no address can be pasted back, e.g.
    /// "this is an SSH session without a forwarded display"): the browser session at the identity provider stays;
    /// nil when the browser logout ran. The revocation is done either way.
    public var browserLogoutSkipped: String? = nil
    /// When the provider returned to the loopback but gave no evidence that it ended a session: why not (e.g. "the
    /// sign-in's access token still works at its UserInfo endpoint"); nil otherwise.
    public var returnWithoutEvidence: String? = nil
    /// Whether the sign-in held a refresh token (what a failed or impossible revocation leaves valid).
    public var hadRefreshToken = false
    /// When that refresh token expires, when the provider said so; nil: until the provider expires it.
    public var refreshTokenExpiry: Date? = nil
    /// Where the refresh token is valid: the provider's token endpoint.
    public var tokenEndpoint: URL? = nil
    /// When the sign-in's last access token expires: a service that checks it without asking the identity provider
    /// (a proxy checking a JWT's signature) may accept it until then, whatever was revoked; nil when not known.
    public var accessTokenExpiry: Date? = nil

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

    /// Whether a refresh token stays valid at the provider: held, and not revoked (no revocation endpoint, or the
    /// revocation failed).
    public var refreshTokenStaysValid: Bool {
        hadRefreshToken && revocation != .revoked
    }

    /// Whether the sign-in's access token may still be accepted after `date` (its expiry is later, or unknown).
    public func accessTokenStaysValid(after date: Date) -> Bool {
        accessTokenExpiry.map { $0 > date } ?? true
    }
}
