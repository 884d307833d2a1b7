import Foundation
import PortalAuth

/// Shows a sign-in on the terminal: the URL (always, so it can be opened by hand), browser problems, a device code,
/// the paste-back prompt, and — only while a browser is expected, never while the person may be typing — a one-line
/// status with the time left.
final class TerminalSignInObserver: SignInObserver {
    private let target: String
    private let status = StatusLine(waitingFor: "the sign-in in the browser")

    /// - Parameter target: what is being signed in to, for the messages.
    init(target: String) {
        self.target = target
    }

    func signInWillOpenBrowser(url: URL, listeningOn redirectURL: URL) {
        StandardError.line("Signing in to \(target).")
        StandardError.line("Open this URL in a browser if one does not open by itself:")
        StandardError.line("")
        StandardError.line("    \(url.absoluteString)")
        StandardError.line("")
        StandardError.line("Waiting for the redirect on \(redirectURL.absoluteString)")
    }

    func browserLaunchFailed(_ message: String) {
        clearStatus()
        StandardError.line("warning: \(message); open the URL above by hand.")
    }

    func browserUnavailable(reason: String) {
        clearStatus()
        StandardError.line("No browser is opened here: \(reason)")
    }

    func pastedAddressRequested(authorizationURL: URL, expectedRedirect: URL) {
        StandardError.line("Signing in to \(target).")
        StandardError.line("Open this URL in a browser on any machine and sign in:")
        StandardError.line("")
        StandardError.line("    \(authorizationURL.absoluteString)")
        StandardError.line("")
        StandardError.line("The browser then ends on an address starting with \(expectedRedirect.absoluteString) (the page may not load).")
        prompt()
    }

    func outOfBandCodeRequested(authorizationURL: URL) {
        StandardError.line("Signing in to \(target).")
        StandardError.line("Open this URL in a browser on any machine and sign in; the page then shows a code:")
        StandardError.line("")
        StandardError.line("    \(authorizationURL.absoluteString)")
        StandardError.line("")
        StandardError.line("Paste the code here and press Enter:")
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
        StandardError.line("    \(authorization.verificationURL.absoluteString)")
        StandardError.line("")
        StandardError.line("and enter the code  \(authorization.userCode)")
        if let complete = authorization.verificationURLComplete {
            StandardError.line("(or open \(complete.absoluteString), which has the code filled in)")
        }
        let minutes = max(1, Int(authorization.expiresIn.components.seconds) / 60)
        StandardError.line("Waiting for the sign-in to be approved (the code is valid for \(minutes) min; Ctrl-C to cancel)…")
    }

    func deviceCodePollingSlowedDown(interval: Duration) {
        StandardError.line("The identity provider asked to check less often; checking every \(interval.components.seconds) s.")
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

    /// The paste-back prompt, on a line of its own.
    private func prompt() {
        StandardError.line("Paste that address here and press Enter:")
    }
}
