import Foundation
import PortalAuth

extension SessionOptions {
    /// Settings for revocations and identity-provider logouts: the browser, the choice of a remote path and the time
    /// limit of these options, a terminal logout observer, the HTTP client with the CA bundle.
    func signOutSettings() -> (settings: SignInSettings, observer: TerminalLogoutObserver) {
        let observer = TerminalLogoutObserver()
        let method = signInMethod
        let settings = SignInSettings(
            browser: noBrowser ? nil : CommandBrowserOpener.systemDefault(override: browserCommand),
            timeout: .seconds(timeout),
            observer: observer,
            // Over SSH or without a display no browser starts: on a terminal the address the browser ends on is
            // pasted back; without one the logout says at once that the browser session stays.
            acceptsPastedRedirect: method != .browser && isatty(0) == 1,
            httpClient: httpClient,
            signInMethod: method
        )
        return (settings, observer)
    }
}
