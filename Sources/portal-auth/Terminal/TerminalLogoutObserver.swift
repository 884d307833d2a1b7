import Foundation
import PortalAuth

/// Shows an identity-provider logout on the terminal: what to open by hand (the private launch page carrying the ID
/// token, or the logout URL when there is no ID token), browser problems, and, on a terminal, a one-line status with
/// the time left.
final class TerminalLogoutObserver: SignInObserver {
    private let status = StatusLine(waitingFor: "the sign-out in the browser")

    func signInWillOpenBrowser(url: URL, listeningOn redirectURL: URL) {
        clearStatus()
        StandardError.line(url.isFileURL ? "Signing out at the identity provider." : "Signing out at the identity provider \(url.host ?? "?").")
        if url.isFileURL {
            // A private page of this user's (0600) that carries the ID token to the logout endpoint; removed when the
            // sign-out ends.
            StandardError.line("If no browser opens by itself, open this page in the browser you signed in with, on this computer "
                + "(a private page that gives the identity provider the ID token, which is never shown; it is removed when the sign-out ends):")
        } else {
            StandardError.line("If no browser opens by itself, open this URL in the browser you signed in with (it lacks the ID token, "
                + "which is never shown; some identity providers do not sign out without it):")
        }
        StandardError.line("")
        StandardError.line("    \(url.absoluteString)")
        StandardError.line("")
        StandardError.line("Waiting for the identity provider to confirm on \(redirectURL.absoluteString)")
    }

    func browserUnavailable(reason: String) {
        clearStatus()
        StandardError.line("No browser is opened here: \(reason).")
    }

    func pastedAddressRequested(authorizationURL: URL, expectedRedirect: URL) {
        StandardError.line("Signing out at the identity provider \(authorizationURL.host ?? "?").")
        StandardError.line("Open this URL in the browser you signed in with, on any machine (it lacks the ID token, which is never "
            + "shown; some identity providers do not sign out without it):")
        StandardError.line("")
        StandardError.line("    \(authorizationURL.absoluteString)")
        StandardError.line("")
        StandardError.line("The browser then ends on an address starting with \(expectedRedirect.absoluteString) (the page may not load).")
        StandardError.line("Paste that address here and press Enter, or press Ctrl-D to leave the browser session as it is:")
    }

    func pastedRedirectRejected(_ message: String) {
        StandardError.line(message)
        StandardError.line("Paste that address here and press Enter, or press Ctrl-D to leave the browser session as it is:")
    }

    func browserLaunchFailed(_ message: String) {
        clearStatus()
        StandardError.line("portal-auth: warning: \(message); open the URL above by hand.")
    }

    func waitingForBrowser(remaining: Duration) {
        status.show(remaining: remaining)
    }

    /// Removes the status line, if one is shown.
    func clearStatus() {
        status.clear()
    }
}
