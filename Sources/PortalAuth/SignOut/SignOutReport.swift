/// What `AuthenticationManager.signOutReport()` did with each credential, and whether the stores were emptied.
public struct SignOutReport: Sendable {
    /// What became of one credential.
    public enum Outcome: Sendable {
        /// The portal revoked the OAuth tokens.
        case revoked
        /// The revocation failed; the tokens stay valid on the server until they expire.
        case revocationFailed(any Error)
        /// The identity provider confirmed the logout: it redirected back, and refuses the sign-in's access token at
        /// its UserInfo endpoint where that can be asked (see `IAPLogoutResult`).
        case loggedOut
        /// No confirmation came in time, or the provider came back without evidence of an ended session: the
        /// browser session may remain.
        case logoutNotConfirmed
        /// The logout could not run or the identity provider refused it.
        case logoutFailed(any Error)

        /// Whether the server confirmed the outcome.
        public var succeeded: Bool {
            switch self {
            case .revoked, .loggedOut: return true
            case .revocationFailed, .logoutNotConfirmed, .logoutFailed: return false
            }
        }
    }

    /// One credential and its outcome.
    public struct Entry: Sendable {
        /// The credential (no longer usable).
        public let credential: ArcGISCredential
        /// What became of it.
        public let outcome: Outcome
        /// For an IAP credential: what the provider's revocation endpoint did with its tokens (`nil` when the
        /// logout did not get that far). A logout can be confirmed while the revocation failed.
        package var tokenRevocation: IAPLogoutResult.Revocation? = nil
        /// For an IAP credential: the whole logout result (why a return was no confirmation, the refresh token left
        /// valid and until when); `nil` when the logout did not get that far.
        package var logoutResult: IAPLogoutResult? = nil

        /// Whether the server confirmed the outcome and no revocation failed.
        public var succeeded: Bool {
            if case .failed? = tokenRevocation { return false }
            return outcome.succeeded
        }
    }

    /// The OAuth user credentials, revoked or not.
    public var revocations: [Entry]
    /// The IAP credentials, logged out or not.
    public var invalidations: [Entry]
    /// Why the persistent store (its file or keyring) could not be emptied, when it could not; the stores in memory
    /// were emptied all the same, and the credentials that were held are unusable from then on.
    public var clearingError: (any Error)?

    /// Whether every revocation and logout was confirmed and the stores are empty.
    public var succeeded: Bool {
        clearingError == nil && (revocations + invalidations).allSatisfy(\.succeeded)
    }
}
