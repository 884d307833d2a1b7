import Foundation
import Synchronization
import PortalAuth

/// Shows an identity-provider logout on the terminal: what to open by hand (the private launch page carrying the ID
/// token, or the logout URL when there is no ID token), browser problems, and, on a terminal, a one-line status with
/// the time left.
final class TerminalLogoutObserver: LogoutPageObserver {
    private let status = StatusLine(waitingFor: "the sign-out in the browser")
    /// The private launch page of the logout under way, shown instead of the logout URL (it carries the ID token).
    private let page = Mutex<URL?>(nil)

    func logoutPageWritten(_ page: URL) {
        self.page.withLock { $0 = page }
    }

    func signInWillOpenBrowser(url logoutURL: URL, listeningOn redirectURL: URL) {
        let url =
            page.withLock { page in
                defer { page = nil }
                return page
            } ?? logoutURL
        clearStatus()
        StandardError.line(
            url.isFileURL
                ? "Signing out at the identity provider." : "Signing out at the identity provider \(url.host ?? "?").")
        if url.isFileURL {
            // A private page of this user's (0600) that carries the ID token to the logout endpoint; removed when the
            // sign-out ends.
            StandardError.line(
                "If no browser opens by itself, open this page in the browser you signed in with, on this computer "
                    + "(a private page that gives the identity provider the ID token, which is never shown; it is removed when the sign-out ends):"
            )
        } else {
            StandardError.line(
                "If no browser opens by itself, open this URL in the browser you signed in with (it lacks the ID token, "
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
        StandardError.line(
            "Open this URL in the browser you signed in with, on any machine (it lacks the ID token, which is never "
                + "shown; some identity providers do not sign out without it):")
        StandardError.line("")
        StandardError.line("    \(authorizationURL.absoluteString)")
        StandardError.line("")
        StandardError.line(
            "The browser then ends on an address starting with \(expectedRedirect.absoluteString) (the page may not load)."
        )
        StandardError.line(
            "Paste that address here and press Enter, or press Ctrl-D to leave the browser session as it is:")
    }

    func pastedRedirectRejected(_ message: String) {
        StandardError.line(message)
        StandardError.line(
            "Paste that address here and press Enter, or press Ctrl-D to leave the browser session as it is:")
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

/// The words `iap logout` and `sign-out` use for what a logout left behind: the same facts, said the same way.
enum LogoutWords {
    /// "the tokens were NOT revoked (the identity provider offers no revocation endpoint): the refresh token stays
    /// valid at https://idp/token until 2026-12-01T10:00:00Z (its expiry); …", or nil when no refresh token stays valid.
    static func refreshTokenLeft(_ result: IAPLogoutResult) -> String? {
        guard result.refreshTokenStaysValid else { return nil }
        let place = result.tokenEndpoint.map { " at \(DisplayText.neutralised($0.absoluteString, limit: 300))" } ?? ""
        let until =
            result.refreshTokenExpiry.map { "until \($0.ISO8601Format()) (its expiry)" }
            ?? "until the identity provider expires it"
        if isEntraByDesign(result) {
            // MicrosoftDocs/entra-docs v2-protocols-oidc.md ("Send a sign-out request") and refresh-tokens.md: the
            // logout ends the browser session only; issued tokens live on, and there is no revocation endpoint.
            return
                "Microsoft Entra ID's logout ends the browser session only, and Entra has no revocation endpoint: the access "
                + "token stays valid until it expires, and the refresh token stays valid\(place) \(until); whoever holds a "
                + "copy of it can still get tokens with it"
        }
        let why: String
        switch result.revocation {
        case .failed(let reason): why = reason
        case .notOffered: why = "the identity provider offers no revocation endpoint"
        case .revoked: return nil
        }
        return
            "the tokens were NOT revoked (\(why)): the refresh token stays valid\(place) \(until); whoever holds a copy of it "
            + "can still get tokens with it"
    }

    /// Whether what `result` left valid is Microsoft Entra ID's design (no revocation endpoint), not a failure: said
    /// as a fact of every Entra logout rather than as a warning.
    static func isEntraByDesign(_ result: IAPLogoutResult) -> Bool {
        result.revocation == .notOffered && result.tokenEndpoint.map(IAPConfiguration.isMicrosoftEntraEndpoint) == true
    }

    /// "the identity provider returned after its logout page but did not confirm the end of a session: …", or nil
    /// when it confirmed or did not return.
    static func returnWithoutEvidence(_ result: IAPLogoutResult) -> String? {
        result.returnWithoutEvidence.map {
            "the identity provider returned after its logout page but did not confirm the end of a session: \($0)"
        }
    }
}
