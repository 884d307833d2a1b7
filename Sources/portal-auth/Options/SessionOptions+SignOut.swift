import Foundation
import PortalAuth

extension SessionOptions {
    /// Settings for revocations and identity-provider logouts: the browser and time limit of these options,
    /// a terminal logout observer, the HTTP client with the CA bundle.
    func signOutSettings() -> (settings: SignInSettings, observer: TerminalLogoutObserver) {
        let observer = TerminalLogoutObserver()
        let settings = SignInSettings(
            browser: noBrowser ? nil : CommandBrowserOpener.systemDefault(override: browserCommand),
            timeout: .seconds(timeout),
            observer: observer,
            httpClient: httpClient
        )
        return (settings, observer)
    }
}
