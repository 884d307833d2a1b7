import Foundation
import PortalAuthCore
import PortalAuthTransport

/// A sign-in that did not complete, for a reason of the flow itself.
///
/// Failures of the pieces it uses keep their own types: `LoopbackError` (the redirect listener,
/// including an identity provider's `error` redirect), `TransportError` (the network),
/// `TokenEndpointError` (the token endpoint's refusal), `IDTokenError`, `BrowserError`.
public struct SignInError: Error, Sendable, CustomStringConvertible, CategorizedError {
    private enum Code: Sendable, Equatable {
        case timedOut(Duration, redirect: String)
        case missingCode
        case pastedURLRejected(String)
        case inputClosed
        case notLoopbackRedirect(String)
        case missingIssuer(String)
        case browserFailed(String)
        case noRemotePath(String)
        case noRemoteLogout(String)
        case methodUnsupported(String)
        case missingIDToken(String)
        case urlUnheard
        case requestRefused(endpoint: String, said: String)
    }

    private let code: Code

    private init(_ code: Code) { self.code = code }

    static func timedOut(after timeout: Duration, redirect: URL) -> SignInError {
        SignInError(.timedOut(timeout, redirect: redirect.absoluteString))
    }
    static func missingCode() -> SignInError { SignInError(.missingCode) }
    static func pastedURLRejected(_ why: String) -> SignInError { SignInError(.pastedURLRejected(why)) }
    static func inputClosed() -> SignInError { SignInError(.inputClosed) }
    static func notLoopbackRedirect(_ url: URL) -> SignInError { SignInError(.notLoopbackRedirect(url.absoluteString)) }
    static func missingIssuer(expected: String) -> SignInError { SignInError(.missingIssuer(expected)) }
    static func browserFailed(_ message: String) -> SignInError { SignInError(.browserFailed(message)) }

    /// For a browser failure, the reason as a clause for another message ("the browser could not be started (…)").
    var browserFailureReason: String? {
        if case .browserFailed(let message) = code { return Self.browserFailureReason(message) }
        return nil
    }

    private static func browserFailureReason(_ message: String) -> String { "the browser could not be started (\(message))" }
    static func noRemotePath(_ reason: String) -> SignInError { SignInError(.noRemotePath(reason)) }
    static func noRemoteLogout(_ reason: String) -> SignInError { SignInError(.noRemoteLogout(reason)) }
    static func methodUnsupported(_ why: String) -> SignInError { SignInError(.methodUnsupported(why)) }
    /// No browser is set and neither the observer nor the logger passes the sign-in URL on.
    static func urlUnheard() -> SignInError { SignInError(.urlUnheard) }
    /// The authorization endpoint answered the request with an OAuth error before any sign-in (an unknown client ID).
    static func requestRefused(authorizeURL: URL, _ said: String) -> SignInError {
        SignInError(.requestRefused(endpoint: RedactedURL(authorizeURL).description, said: said))
    }
    static func missingIDToken(tokenURL: URL) -> SignInError { SignInError(.missingIDToken(RedactedURL(tokenURL).description)) }

    /// Whether the browser command could not start or failed, so the sign-in cannot go on through it.
    public var isBrowserFailure: Bool {
        if case .browserFailed = code { return true }
        return false
    }

    /// Whether no browser can open here and no remote path is possible (no terminal to paste on, no device code).
    public var needsTerminal: Bool {
        switch code {
        case .noRemotePath, .noRemoteLogout: return true
        default: return false
        }
    }

    /// Whether standard input ended before an address was pasted.
    public var isInputClosed: Bool {
        if case .inputClosed = code { return true }
        return false
    }

    /// Whether the sign-in gave up waiting for the browser.
    public var isTimeout: Bool {
        if case .timedOut = code { return true }
        return false
    }

    public var category: ErrorCategory {
        switch code {
        case .timedOut: return .timedOut
        case .missingCode, .pastedURLRejected: return .invalidContent
        case .missingIssuer, .requestRefused: return .refused
        case .missingIDToken: return .invalidContent
        case .inputClosed: return .cancelled
        case .browserFailed: return .unavailable
        case .noRemotePath, .noRemoteLogout, .methodUnsupported, .urlUnheard: return .usage
        case .notLoopbackRedirect: return .usage
        }
    }

    public var description: String {
        switch code {
        case .timedOut(let timeout, let redirect):
            let seconds = Int(timeout.timeInterval.rounded())
            return "no sign-in arrived at \(redirect) within \(seconds) s. Finish signing in in the browser sooner, "
                + "or give more time with --timeout; if the browser never opened, use --no-browser and open the printed URL by hand."
        case .missingCode:
            return "the identity provider redirected back without an authorization code; sign in again."
        case .pastedURLRejected(let why):
            return "the pasted URL cannot finish this sign-in: \(why)"
        case .inputClosed:
            return "standard input closed before a redirect URL was pasted."
        case .missingIssuer(let expected):
            return "the sign-in response has no iss parameter although \(expected) announces one (RFC 9207); "
                + "it may come from another server, so it was refused. Sign in again."
        case .browserFailed(let message):
            return "\(Self.browserFailureReason(message))."
        case .urlUnheard:
            return "no browser is set, and nothing receives the sign-in URL (the observer is SilentSignInObserver and the "
                + "logger discards events): give SignInSettings a browser, an observer whose signInWillOpenBrowser shows "
                + "the URL, or a logger"
        case .noRemotePath(let reason):
            return "no browser can be used here (\(reason)) and there is no terminal to paste the final address on. "
                + "Run the command on a terminal (over SSH: ssh -t), or with --device-code where the identity provider offers it."
        case .noRemoteLogout(let reason):
            return "no browser can be used here (\(reason)) and there is no terminal to paste the address the browser ends on, "
                + "so the browser session at the identity provider stays. Run the command on a terminal (over SSH: ssh -t) to end it."
        case .requestRefused(let endpoint, let said):
            return "the identity provider refuses this sign-in request at \(endpoint): \(said), so no browser was opened. "
                + "Check the client ID and that the redirect URL is registered for it."
        case .methodUnsupported(let why):
            return why
        case .missingIDToken(let tokenURL):
            return "the token endpoint \(tokenURL) answered without an id_token although the scope openid was asked for "
                + "(OpenID Connect Core 3.1.3.3), so the sign-in cannot be checked (nonce, audience, issuer) and was refused. "
                + "Check that token_url belongs to an OpenID Connect provider, or remove openid from the configuration's scope."
        case .notLoopbackRedirect(let url):
            return "the redirect URL \(url) is not a loopback address (http://127.0.0.1, http://[::1] or http://localhost), "
                + "so this computer cannot receive the sign-in; register and use a loopback redirect URL."
        }
    }
}
