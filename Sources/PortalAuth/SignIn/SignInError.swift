import Foundation
import PortalAuthCore
import PortalAuthTransport

/// A sign-in that did not complete, for a reason of the flow itself.
///
/// Failures of the pieces it uses keep their own types: a loopback error (a `CategorizedError`: the redirect listener,
/// including an identity provider's `error` redirect), a transport error (a `CategorizedError`: the network),
/// a token-endpoint error (a `CategorizedError`: the token endpoint's refusal), an ID-token error (a `CategorizedError`), `BrowserError`.
public struct SignInError: Error, Sendable, CustomStringConvertible, CategorizedError {
    /// What went wrong, for a front end that words its own advice (the command-line tool names its options).
    package enum Code: Sendable, Equatable {
        case timedOut(Duration, redirect: String)
        case missingCode
        case pastedURLRejected(String)
        case inputClosed
        case notLoopbackRedirect(String)
        case missingIssuer(String)
        case browserFailed(String)
        /// `deviceCodeRuledOut`: the identity provider has none (an ArcGIS portal, or none found), so advice to use
        /// one would lead nowhere.
        case noRemotePath(String, deviceCodeRuledOut: Bool)
        case noRemoteLogout(String)
        case methodUnsupported(String)
        /// ``SignInMethod/deviceCode`` for an ArcGIS portal.
        case portalHasNoDeviceCode
        case missingIDToken(String)
        /// No browser to start (or it failed: the reason) and nothing tells the person the sign-in URL or a code.
        case unheard(String)
        case requestRefused(endpoint: String, said: String)
    }

    /// The case, for a front end's own wording.
    package let code: Code

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

    private static func browserFailureReason(_ message: String) -> String {
        "the browser could not be started" + MessagePart.given(" (", message, ")")
    }
    static func noRemotePath(_ reason: String, deviceCodeRuledOut: Bool = false) -> SignInError {
        SignInError(.noRemotePath(reason, deviceCodeRuledOut: deviceCodeRuledOut))
    }
    static func noRemoteLogout(_ reason: String) -> SignInError { SignInError(.noRemoteLogout(reason)) }
    static func methodUnsupported(_ why: String) -> SignInError { SignInError(.methodUnsupported(why)) }
    static func portalHasNoDeviceCode() -> SignInError { SignInError(.portalHasNoDeviceCode) }
    /// No browser is set and neither the observer nor the logger passes the sign-in URL on.
    static func urlUnheard() -> SignInError { SignInError(.unheard("no browser is set")) }
    /// The browser could not be used (`reason`) and the observer shows nobody the URL or a code.
    static func unheard(_ reason: String) -> SignInError { SignInError(.unheard(reason)) }
    /// The authorization endpoint answered the request with an OAuth error before any sign-in (an unknown client ID).
    static func requestRefused(authorizeURL: URL, _ said: String) -> SignInError {
        SignInError(.requestRefused(endpoint: RedactedURL(authorizeURL).description, said: said))
    }
    static func missingIDToken(tokenURL: URL) -> SignInError {
        SignInError(.missingIDToken(RedactedURL(tokenURL).description))
    }

    /// Whether the browser command could not start or failed, so the sign-in cannot go on through it.
    public var isBrowserFailure: Bool {
        if case .browserFailed = code { return true }
        return false
    }

    /// Whether no browser can open here and no remote path is possible (no terminal to paste on, no device code, or
    /// nothing that shows the person a URL or a code).
    public var needsTerminal: Bool {
        switch code {
        case .noRemotePath, .noRemoteLogout, .unheard: return true
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
        case .inputClosed: return .usage
        case .browserFailed: return .unavailable
        case .noRemotePath, .noRemoteLogout, .methodUnsupported, .portalHasNoDeviceCode, .unheard: return .usage
        case .notLoopbackRedirect: return .usage
        }
    }

    /// What the app can set to get past this failure, in the library's words (its settings and API), or nil.
    package var appAdvice: String? {
        switch code {
        case .timedOut:
            return
                "Finish signing in in the browser sooner, or give more time (SignInSettings.timeout). If the browser "
                + "never opened, show the sign-in URL to the person (SignInSettings.observer) or take another path "
                + "(SignInSettings.signInMethod .pasteBack or .deviceCode); if it showed an error page, the client ID or the "
                + "redirect URL is not registered with the identity provider."
        case .noRemotePath(_, let ruledOut):
            return
                "Give the sign-in a way to reach the person: a browser command that works here (SignInSettings.browser, "
                + "SignInSettings.browserCommand(_:arguments:)), pasted addresses (SignInSettings.takePastedAddresses(from:))"
                + (ruledOut
                    ? "."
                    : ", or a device code shown by the observer (SignInMethod.deviceCode, SignInObserver.deviceCodeIssued) where the identity provider offers one.")
        case .noRemoteLogout:
            return "Give the logout a browser command that works here (SignInSettings.browser) or pasted addresses "
                + "(SignInSettings.takePastedAddresses(from:)) to end it."
        case .inputClosed:
            return
                "Keep the pasted lines open until the address is pasted (SignInSettings.takePastedAddresses(from:)), "
                + "or sign in another way: SignInMethod.deviceCode where the identity provider offers one, or a browser "
                + "command that works here (SignInSettings.browser)."
        case .portalHasNoDeviceCode:
            return
                "Sign in with SignInMethod.pasteBack (with pasted addresses: SignInSettings.takePastedAddresses(from:)), "
                + "or with SignInMethod.outOfBand where the app's registration lists urn:ietf:wg:oauth:2.0:oob."
        case .unheard:
            return "Give the app a way to reach the person: an observer that shows the sign-in URL and a device code "
                + "(SignInSettings.observer: SignInObserver.signInWillOpenBrowser and deviceCodeIssued), a browser command "
                + "that works here (SignInSettings.browser, SignInSettings.browserCommand(_:arguments:)), or pasted "
                + "addresses (SignInSettings.takePastedAddresses(from:))."
        default:
            return nil
        }
    }

    /// What happened, without advice: the description of the cases that have ``appAdvice``, which a front end
    /// follows with its own.
    package var summary: String {
        switch code {
        case .timedOut(let timeout, let redirect):
            let seconds = Int(timeout.timeInterval.rounded())
            return "no sign-in arrived at \(redirect) within \(seconds) s."
        case .missingCode:
            return "the identity provider redirected back without an authorization code; sign in again."
        case .pastedURLRejected(let why):
            return "the pasted URL cannot finish this sign-in" + MessagePart.given(": ", why)
        case .inputClosed:
            return "the pasted lines ended before a redirect URL was pasted."
        case .missingIssuer(let expected):
            return "the sign-in response has no iss parameter although \(MessagePart.or(expected, "its issuer")) "
                + "announces one (RFC 9207); "
                + "it may come from another server, so it was refused. Sign in again."
        case .browserFailed(let message):
            return "\(Self.browserFailureReason(message))."
        case .unheard(let reason):
            return
                "\(MessagePart.or(reason, "no browser can be used")), and nothing shows the person the sign-in URL or "
                + "a code (no SignInSettings.observer "
                + "is set, so no SignInObserver.deviceCodeIssued or signInWillOpenBrowser shows them), so the sign-in "
                + "stopped at once instead of waiting."
        case .noRemotePath(let reason, _):
            return
                "no browser can be used here\(MessagePart.given(" (", reason, ")")) and there is no way to paste the "
                + "final address."
        case .noRemoteLogout(let reason):
            return
                "no browser can be used here\(MessagePart.given(" (", reason, ")")) and there is no way to paste the address "
                + "the browser ends on, "
                + "so the browser session at the identity provider stays."
        case .requestRefused(let endpoint, let said):
            return
                "the identity provider refuses this sign-in request at \(endpoint)\(MessagePart.given(": ", said)), so no "
                + "browser was opened. "
                + "Check the client ID and that the redirect URL is registered for it."
        case .methodUnsupported(let why):
            return MessagePart.or(why, "this sign-in method cannot be used here.")
        case .portalHasNoDeviceCode:
            return "ArcGIS portals have no device code."
        case .missingIDToken(let tokenURL):
            return
                "the token endpoint \(tokenURL) answered without an id_token although the scope openid was asked for "
                + "(OpenID Connect Core 3.1.3.3), so the sign-in cannot be checked (nonce, audience, issuer) and was refused. "
                + "Check that token_url belongs to an OpenID Connect provider, or remove openid from the configuration's scope."
        case .notLoopbackRedirect(let url):
            return
                "the redirect URL \(url) is not a loopback address (http://127.0.0.1, http://[::1] or http://localhost), "
                + "so this computer cannot receive the sign-in; register and use a loopback redirect URL."
        }
    }

    public var description: String {
        appAdvice.map { summary + " " + $0 } ?? summary
    }
}
