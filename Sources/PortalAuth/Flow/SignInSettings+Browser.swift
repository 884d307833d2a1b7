import Foundation

extension SignInSettings {
    /// Opens `url` in the settings' browser, if any, without exposing it to other local users (see
    /// `BrowserOpener.launch(_:onExit:)`); a failed launch (or a launcher that exits with a failure) is reported to
    /// the observer and is never fatal, since the URL was shown to the user as well.
    ///
    /// - Returns: the launch page to remove when the sign-in or logout ends, if the opener wrote one.
    @discardableResult
    func openBrowser(at url: URL) -> BrowserLaunchPage? {
        guard let browser else { return nil }
        let observer = self.observer
        do {
            return try browser.launch(url) { status in
                if status != 0 { observer.browserLaunchFailed("the browser command exited with status \(status)") }
            }
        } catch {
            observer.browserLaunchFailed(error.description)
            return nil
        }
    }
}
