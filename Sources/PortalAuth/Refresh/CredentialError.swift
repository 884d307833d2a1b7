/// A credential that cannot give a valid token.
import Foundation
import PortalAuthCore

public struct CredentialError: Error, Sendable, CustomStringConvertible, CategorizedError {
    private enum Code: Sendable, Equatable {
        case signInRequired(String)
        case refreshTokenRejected(String)
        case unavailable(attempts: Int, String)
        case outcomeUnknown(String)
        case refreshedButNotStored(store: String, String)
        case notStored
        case invalidated
        case insecureTransport(String)
        case unusableAccessToken(String)
    }

    private let code: Code
    /// What the credential is for ("the portal https://…", "the IAP configuration /path/file.json").
    public let target: String

    private init(_ code: Code, target: String) {
        self.code = code
        self.target = target
    }

    static func signInRequired(_ target: String, because reason: String) -> CredentialError {
        CredentialError(.signInRequired(reason), target: target)
    }
    static func refreshTokenRejected(_ target: String, detail: String) -> CredentialError {
        CredentialError(.refreshTokenRejected(detail), target: target)
    }
    static func unavailable(_ target: String, attempts: Int, lastError: String) -> CredentialError {
        CredentialError(.unavailable(attempts: attempts, lastError), target: target)
    }
    /// A refresh request that may have reached the provider got no usable answer; it was not sent again.
    static func outcomeUnknown(_ target: String, reason: String) -> CredentialError {
        CredentialError(.outcomeUnknown(reason), target: target)
    }
    /// The provider answered a refresh, but the store could not be written; the tokens are in memory only.
    static func refreshedButNotStored(_ target: String, store: String, reason: String) -> CredentialError {
        CredentialError(.refreshedButNotStored(store: store, reason), target: target)
    }
    static func notStored(_ target: String) -> CredentialError { CredentialError(.notStored, target: target) }
    static func invalidated(_ target: String) -> CredentialError { CredentialError(.invalidated, target: target) }
    /// A refresh brought an access token too close to its expiry to hand out (see `TokenFreshness`); the refreshed
    /// tokens are stored.
    static func unusableAccessToken(_ target: String, reason: String) -> CredentialError {
        CredentialError(.unusableAccessToken(reason), target: target)
    }
    static func insecureTransport(_ target: String, url: String) -> CredentialError {
        CredentialError(.insecureTransport(url), target: target)
    }

    /// Whether only a new interactive sign-in can help (the refresh token is gone or dead).
    public var requiresSignIn: Bool {
        switch code {
        case .signInRequired, .refreshTokenRejected, .notStored, .invalidated: return true
        case .unavailable, .outcomeUnknown, .refreshedButNotStored, .insecureTransport, .unusableAccessToken:
            return false
        }
    }

    /// Whether the identity provider refused the refresh token (it expired, or was revoked).
    var isRefreshTokenRejection: Bool {
        if case .refreshTokenRejected = code { return true }
        return false
    }

    /// What the provider said when it refused the refresh token (never a token); empty for other errors.
    var detail: String {
        if case .refreshTokenRejected(let detail) = code { return detail }
        return ""
    }

    public var category: ErrorCategory {
        switch code {
        case .signInRequired, .refreshTokenRejected, .notStored, .invalidated: return .refused
        case .unavailable, .outcomeUnknown, .unusableAccessToken: return .unavailable
        case .refreshedButNotStored: return .local
        case .insecureTransport: return .usage
        }
    }

    /// `last` (another error's message) as a clause of this message: without its final period, and without the
    /// "try again later" this message says itself.
    private static func clause(_ last: String) -> String {
        var reason = last.hasSuffix(".") ? String(last.dropLast()) : last
        for ending in ["; try again later", ". Try again later"] where reason.hasSuffix(ending) {
            reason.removeLast(ending.count)
        }
        return reason
    }

    public var description: String {
        // No value is ever interpolated empty (issue 45: a sentence ended on one): an empty target, reason or
        // detail leaves its words out.
        let target = self.target.isEmpty ? "the service" : self.target
        /// `text` without a final period, or nil when empty.
        func sentence(_ text: String) -> String? {
            let trimmed = text.hasSuffix(".") ? String(text.dropLast()) : text
            return trimmed.trimmingCharacters(in: .whitespaces).isEmpty ? nil : trimmed
        }
        switch code {
        case .signInRequired(let reason):
            return "a new sign-in to \(target) is needed" + (sentence(reason).map { ": \($0)" } ?? "")
        case .refreshTokenRejected(let detail):
            return "the stored sign-in to \(target) is no longer accepted"
                + (sentence(detail).map { " (\($0))" } ?? "") + "; sign in again"
        case .unavailable(let attempts, let last):
            // The last error is a sentence of its own, usually ending with a period.
            return
                "could not refresh the token for \(target) after \(attempts) attempt\(attempts == 1 ? "" : "s")"
                + (sentence(Self.clause(last)).map { ": \($0)" } ?? "")
                + ". The stored sign-in is kept; try again later"
        case .outcomeUnknown(let last):
            return
                "the refresh request for \(target) may have reached the identity provider, but no usable answer came"
                + (sentence(Self.clause(last)).map { ": \($0)" } ?? "") + ". "
                + "It was not sent again, because a provider that rotates refresh tokens takes a second use of one for theft "
                + "and ends the sign-in. The stored sign-in is kept as it was; try again later, and if the provider then "
                + "refuses the refresh token, sign in again"
        case .refreshedButNotStored(let store, let last):
            return "the tokens for \(target) were refreshed, but could not be written to "
                + (store.isEmpty ? "the credential store" : store)
                + (sentence(Self.clause(last)).map { ": \($0)" } ?? "") + ". "
                + "The new refresh token is held by this process only, and the stored one may already be spent. "
                + "Free space or fix the file system; a program still running writes the new tokens at its next use, "
                + "otherwise try again and, if the refresh token is refused, sign in again"
        case .notStored:
            return "no stored sign-in for \(target)"
        case .invalidated:
            return "the credential for \(target) was signed out"
        case .unusableAccessToken(let reason):
            return "the identity provider answered the refresh for \(target) with an access token that "
                + MessagePart.or(sentence(reason), "cannot be used") + "; "
                + "it is not handed out (never a token known to be expired or past half its lifetime). The new tokens "
                + "are stored and the next use refreshes again; if every answer is like this, the provider issues access "
                + "tokens too short to use: have its access-token lifetime raised"
        case .insecureTransport(let url):
            return "the token for \(target) may only be sent over HTTPS"
                + (url.isEmpty ? "" : ", not to \(url)")
        }
    }
}
