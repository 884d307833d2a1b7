import Foundation

extension SignInSettings {
    /// Opens `url` in the settings' browser, if any; a failed launch (or a launcher that exits with a failure)
    /// is reported to the observer and is never fatal, since the URL was shown to the user as well.
    func openBrowser(at url: URL) {
        guard let browser else { return }
        let observer = self.observer
        do {
            try browser.open(url) { status in
                if status != 0 { observer.browserLaunchFailed("the browser command exited with status \(status)") }
            }
        } catch {
            observer.browserLaunchFailed(error.description)
        }
    }
}
