import Foundation
import PortalAuth
import Synchronization

/// Shows a sign-in on the terminal: the URL (always, so it can be opened by hand), browser problems, a device code,
/// the paste-back prompt, and — only while a browser is expected, never while the person may be typing — a one-line
/// status with the time left.
final class TerminalSignInObserver: SignInObserver {
    private let target: String
    private let pasteHint: Bool
    private let waitLimit: Duration?
    private let status = StatusLine(waitingFor: "the sign-in in the browser")
    /// Whether the person is asked for the code of an out-of-band page rather than an address.
    private let asksForCode = Mutex(false)

    /// - Parameters:
    ///   - target: what is being signed in to, for the messages.
    ///   - pasteHint: whether to say, beside a browser sign-in, that the final redirect URL can be pasted.
    ///   - waitLimit: the command's `--timeout`, named when it ends a device-code wait before the code expires.
    init(target: String, pasteHint: Bool = false, waitLimit: Duration? = nil) {
        self.target = target
        self.pasteHint = pasteHint
        self.waitLimit = waitLimit
    }

    func signInWillOpenBrowser(url: URL, listeningOn redirectURL: URL) {
        StandardError.line("Signing in to \(target).")
        StandardError.line("Open this URL in a browser if one does not open by itself:")
        StandardError.line("")
        StandardError.line("    \(url.absoluteString)")
        StandardError.line("")
        StandardError.line("Waiting for the redirect on \(redirectURL.absoluteString)")
        // Said once, beside the URL: the provider's error page in the browser is not something waiting can fix.
        StandardError.line(
            "If the browser shows an error page from the identity provider, the client ID or this redirect URL is not registered with it."
        )
        // Microsoft Entra shows AADSTS50011 (redirect URL not registered) only in the browser: name its fix here.
        if let entra = IAPConfiguration.entraRedirectAdvice(authorizationURL: url, redirectURL: redirectURL) {
            StandardError.line(entra)
        }
        if pasteHint {
            StandardError.line(
                "If your browser runs on another machine, paste the address it ends on (starting with \(redirectURL.absoluteString)) here and press Enter."
            )
        }
    }

    func browserLaunchFailed(_ message: String) {
        clearStatus()
        StandardError.line("portal-auth: warning: \(message); open the URL above by hand.")
    }

    func browserUnavailable(reason: String) {
        clearStatus()
        StandardError.line("No browser is opened here: \(reason)\(reason.hasSuffix(".") ? "" : ".")")
    }

    func browserFailedPasteRequested(_ message: String, expectedRedirect: URL) {
        clearStatus()
        StandardError.line("portal-auth: warning: \(message).")
        StandardError.line(
            "Open the URL above in a browser on any machine and sign in. The browser then ends on an address starting with \(expectedRedirect.absoluteString) (the page may not load)."
        )
        prompt()
    }

    func pastedAddressRequested(authorizationURL: URL, expectedRedirect: URL) {
        StandardError.line("Signing in to \(target).")
        StandardError.line("Open this URL in a browser on any machine and sign in:")
        StandardError.line("")
        StandardError.line("    \(authorizationURL.absoluteString)")
        StandardError.line("")
        StandardError.line(
            "The browser then ends on an address starting with \(expectedRedirect.absoluteString) (the page may not load)."
        )
        prompt()
    }

    func outOfBandCodeRequested(authorizationURL: URL) {
        StandardError.line("Signing in to \(target).")
        StandardError.line("Open this URL in a browser on any machine and sign in; the page then shows a code:")
        StandardError.line("")
        StandardError.line("    \(authorizationURL.absoluteString)")
        StandardError.line("")
        asksForCode.withLock { $0 = true }
        prompt()
    }

    func configurationWarning(_ message: String) {
        clearStatus()
        StandardError.line("portal-auth: WARNING: \(message).")
    }

    func pastedRedirectRejected(_ message: String) {
        clearStatus()
        StandardError.line(message)
        prompt()
    }

    func deviceCodeIssued(_ authorization: DeviceAuthorization) {
        StandardError.line("Signing in to \(target) with a device code.")
        StandardError.line("On any device, open")
        StandardError.line("")
        StandardError.line("    \(DisplayText.neutralised(authorization.verificationURL.absoluteString, limit: 2000))")
        StandardError.line("")
        StandardError.line("and enter the code  \(DisplayText.neutralised(authorization.userCode, limit: 200))")
        if let complete = authorization.verificationURLComplete {
            // On a line of its own with nothing after it: a terminal's link detection or a double-click takes the
            // whole address and no punctuation (a trailing comma made the server refuse the code).
            StandardError.line("")
            StandardError.line("Or open this address, which has the code filled in:")
            StandardError.line("")
            StandardError.line("    \(DisplayText.neutralised(complete.absoluteString, limit: 2000))")
            StandardError.line("")
        }
        let minutes = max(1, Int(authorization.expiresIn.components.seconds) / 60)
        if let waitLimit, waitLimit < authorization.expiresIn {
            let limit = waitLimit.components.seconds
            let shown = limit < 120 ? "\(limit) s" : "\(limit / 60) min"
            StandardError.line(
                "Waiting for the sign-in to be approved (for at most \(shown), --timeout; the code is valid for \(minutes) min; Ctrl-C to cancel)…"
            )
        } else {
            StandardError.line(
                "Waiting for the sign-in to be approved (the code is valid for \(minutes) min; Ctrl-C to cancel)…")
        }
    }

    func deviceCodePollingSlowedDown(interval: Duration) {
        StandardError.line(
            "The identity provider asked to check less often; checking every \(interval.components.seconds) s.")
    }

    func signInRequestProblem(_ message: String) {
        clearStatus()
        StandardError.line(
            "portal-auth: warning: the identity provider seems to reject this sign-in request: \(message). If the browser "
                + "shows an error page too, press Ctrl-C and check the client ID and the registered redirect URL.")
    }

    func waitingForBrowser(remaining: Duration) {
        status.show(remaining: remaining)
    }

    func exchangingCode() {
        clearStatus()
        StandardError.line("Browser sign-in received; getting tokens…")
    }

    /// Removes the status line, if one is shown.
    func clearStatus() {
        status.clear()
    }

    /// The paste-back prompt, on a line of its own: for the code of an out-of-band page, or for the final address.
    private func prompt() {
        StandardError.line(
            asksForCode.withLock { $0 }
                ? "Paste the code here and press Enter:" : "Paste that address here and press Enter:")
    }
}
