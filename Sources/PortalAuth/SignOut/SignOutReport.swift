package import Foundation
import PortalAuthCore
import PortalAuthTransport

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
        /// No browser logout could run here (the reason: no browser can reach the person and no address can be
        /// pasted back): the browser session at the identity provider stays. What can be ended without a browser
        /// was (the refresh token at the provider's revocation endpoint, see `Entry.logoutResult`).
        case browserLogoutSkipped(String)
        /// The logout could not run or the identity provider refused it.
        case logoutFailed(any Error)

        /// Whether the server confirmed the outcome.
        public var succeeded: Bool {
            switch self {
            case .revoked, .loggedOut: return true
            case .revocationFailed, .logoutNotConfirmed, .browserLogoutSkipped, .logoutFailed: return false
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
        public var tokenRevocation: IAPLogoutResult.Revocation? { logoutResult?.revocation }
        /// For an IAP credential: the whole logout result — what ended (the browser session, the refresh token) and
        /// what stays valid and until when (a refresh token not revoked, the last access token, a browser session no
        /// browser could end); `nil` when the logout did not get that far (`Outcome.logoutFailed`).
        public internal(set) var logoutResult: IAPLogoutResult? = nil

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

extension IAPLogoutResult {
    /// What this logout ended, in words shared by the library's log and the tool ("the refresh token (revoked at
    /// the identity provider)", …); empty when nothing is known to have ended.
    package var ended: [String] {
        var ended: [String] = []
        if isSessionEndConfirmed { ended.append("the browser session at the identity provider (it confirmed the end)") }
        if revocation == .revoked {
            ended.append(
                hadRefreshToken ? "the refresh token (revoked at the identity provider)" : "the access token (revoked)")
        }
        return ended
    }

    /// What stays valid after this logout and until when, at `now`, in words shared by the library's log and the
    /// tool; empty when nothing does. The last access token is named only beside something else that stays: alone,
    /// it is what every logout leaves until it expires.
    package func stillValid(now: Date) -> [String] {
        var left: [String] = []
        if let reason = browserLogoutSkipped {
            left.append(
                "the browser session at the identity provider (no browser logout could run: \(DisplayText.neutralised(reason, limit: 300)))"
            )
        } else if !isSessionEndConfirmed {
            left.append("possibly the browser session at the identity provider (the provider did not confirm its end)")
        }
        if refreshTokenStaysValid {
            let why: String
            switch revocation {
            case .failed(let reason): why = "the revocation failed: \(DisplayText.neutralised(reason, limit: 300))"
            case .notOffered: why = "the identity provider offers no revocation endpoint"
            case .revoked: why = ""
            }
            let place = tokenEndpoint.map { " at \(RedactedURL($0))" } ?? ""
            let until =
                refreshTokenExpiry.map { "until \(UTCTimestamp.iso8601($0)) (its expiry)" }
                ?? "until the identity provider expires it"
            left.append("the refresh token\(place) \(until), not revoked (\(why))")
        }
        if !left.isEmpty, let expiry = accessTokenExpiry, expiry > now {
            left.append(
                "the last access token until \(UTCTimestamp.iso8601(expiry)), at services that check it without asking the identity provider"
            )
        }
        return left
    }
}

extension SignOutReport.Entry {
    /// What stays valid after this entry's sign-out, at `now` (see `IAPLogoutResult.stillValid(now:)`), joined;
    /// nil when nothing does.
    package func leftValid(now: Date) -> String? {
        switch outcome {
        case .revocationFailed:
            return "the portal's tokens, until they expire (the revocation failed)"
        case .logoutFailed:
            guard logoutResult == nil else { break }
            return "the browser session at the identity provider, and the refresh token where it was not revoked"
        default:
            break
        }
        let left = logoutResult?.stillValid(now: now) ?? []
        return left.isEmpty ? nil : left.joined(separator: "; ")
    }
}
