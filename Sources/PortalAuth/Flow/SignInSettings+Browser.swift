import Foundation

extension SignInSettings {
    /// Opens `url` in the settings' browser, if any; a failed launch (or a launcher that exits with a failure)
    /// is reported to the observer and is never fatal, since the URL was shown to the user as well.
    func openBrowser(at url: URL) {
        _ = openBrowserReportingFailures(at: url)
    }

    /// Opens `url` like ``openBrowser(at:)`` and returns the failure, if any, as it happens: the stream yields the
    /// message once when the command cannot start or exits with a failure, and ends when the command succeeded.
    func openBrowserReportingFailures(at url: URL) -> AsyncStream<String> {
        let (failures, continuation) = AsyncStream.makeStream(of: String.self)
        guard let browser else {
            continuation.finish()
            return failures
        }
        let observer = self.observer
        do {
            try browser.open(url) { status in
                if status != 0 {
                    let message = "the browser command exited with status \(status)"
                    observer.browserLaunchFailed(message)
                    continuation.yield(message)
                }
                continuation.finish()
            }
        } catch {
            observer.browserLaunchFailed(error.description)
            continuation.yield(error.description)
            continuation.finish()
        }
        return failures
    }
}
