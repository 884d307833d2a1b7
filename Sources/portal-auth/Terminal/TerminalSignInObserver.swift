import Foundation
import PortalAuth

/// Shows a sign-in on the terminal: the URL (always, so it can be opened by hand), browser
/// problems, and, on a terminal, a one-line status with the time left.
final class TerminalSignInObserver: SignInObserver {
    private let target: String
    private let pasteHint: Bool
    private let status = StatusLine(waitingFor: "the sign-in in the browser")

    /// - Parameters:
    ///   - target: what is being signed in to, for the messages.
    ///   - pasteHint: whether to say that the final redirect URL can be pasted.
    init(target: String, pasteHint: Bool) {
        self.target = target
        self.pasteHint = pasteHint
    }

    func signInWillOpenBrowser(url: URL, listeningOn redirectURL: URL) {
        StandardError.line("Signing in to \(target).")
        StandardError.line("Open this URL in a browser if one does not open by itself:")
        StandardError.line("")
        StandardError.line("    \(url.absoluteString)")
        StandardError.line("")
        StandardError.line("Waiting for the redirect on \(redirectURL.absoluteString)")
        StandardError.line("If the browser shows an error page from the identity provider instead of a sign-in form, press Ctrl-C "
            + "and check the client ID and that \(redirectURL.absoluteString) is a registered redirect URL (some providers "
            + "need its exact port registered).")
        if pasteHint {
            StandardError.line("If your browser runs on another machine, paste the address it ends on (starting with \(redirectURL.absoluteString)) here and press Enter.")
        }
    }

    func browserLaunchFailed(_ message: String) {
        clearStatus()
        StandardError.line("warning: \(message); open the URL above by hand.")
    }

    func configurationWarning(_ message: String) {
        clearStatus()
        StandardError.line("portal-auth: WARNING: \(message).")
    }

    func pastedRedirectRejected(_ message: String) {
        clearStatus()
        StandardError.line("That address cannot finish this sign-in: \(message). Paste the address the browser shows after signing in.")
    }

    func signInRequestProblem(_ message: String) {
        clearStatus()
        StandardError.line("warning: the identity provider seems to reject this sign-in request: \(message). If the browser "
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
}
