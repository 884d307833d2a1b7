import Foundation
import PortalAuth
import Synchronization

/// Shows an identity-provider logout on the terminal: the logout URL (without the ID token, so it can be
/// opened by hand), browser problems, and, on a terminal, a one-line status with the time left.
final class TerminalLogoutObserver: SignInObserver {
    private let statusShown = Mutex(false)

    func signInWillOpenBrowser(url: URL, listeningOn redirectURL: URL) {
        clearStatus()
        StandardError.line("Signing out at the identity provider \(url.host ?? "?").")
        StandardError.line("Open this URL in a browser if one does not open by itself:")
        StandardError.line("")
        StandardError.line("    \(url.absoluteString)")
        StandardError.line("")
        StandardError.line("Waiting for the identity provider to confirm on \(redirectURL.absoluteString)")
    }

    func browserLaunchFailed(_ message: String) {
        clearStatus()
        StandardError.line("warning: \(message); open the URL above by hand.")
    }

    func waitingForBrowser(remaining: Duration) {
        guard StandardError.isTerminal else { return }
        let seconds = Int(remaining.components.seconds)
        statusShown.withLock { $0 = true }
        StandardError.write("\r\u{1B}[2K" + String(format: "Waiting for the sign-out in the browser… %d:%02d left (Ctrl-C to stop)", seconds / 60, seconds % 60))
    }

    /// Removes the status line, if one is shown.
    func clearStatus() {
        if statusShown.withLock({ value in defer { value = false }; return value }) { StandardError.write("\r\u{1B}[2K") }
    }
}
