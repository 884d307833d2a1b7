import Foundation

extension SignInSettings {
    /// Why no browser is started here for a flow that has no remote path of its own to choose (a logout), or nil
    /// when one is: ``SignInMethod/browser`` always starts it; ``SignInMethod/automatic`` where the environment can
    /// show it, or with no browser set (the observer shows the URL); the other methods never do.
    var remoteReason: String? {
        switch signInMethod {
        case .browser: return nil
        case .automatic: return browser == nil ? nil : environment.reasonBrowserCannotShow
        case .pasteBack, .deviceCode, .outOfBand: return "\(signInMethod) was asked for"
        }
    }

    /// Opens `url` in the settings' browser, if any, without exposing it to other local users (see
    /// `BrowserOpener.launchHidingURL(_:onExit:)`); a failed launch (or a launcher that exits with a failure) is reported to
    /// the observer and is never fatal, since the URL was shown to the user as well.
    ///
    /// - Returns: the launch page to remove when the sign-in or logout ends, if the opener wrote one.
    @discardableResult
    func openBrowser(at url: URL) -> BrowserLaunchPage? {
        openBrowserReportingFailures(at: url).page
    }

    /// Opens `url` like ``openBrowser(at:)`` and also returns the failure, if any, as it happens: the stream yields
    /// the message once when the command cannot start or exits with a failure, and ends when the command succeeded.
    ///
    /// - Parameter announcing: whether the observer hears of a failure (and tells the person to open the URL by hand);
    ///   false when the caller moves on to another path at once, where that advice would be wrong.
    func openBrowserReportingFailures(at url: URL, announcing: Bool = true) -> (page: BrowserLaunchPage?, failures: AsyncStream<String>) {
        let (failures, continuation) = AsyncStream.makeStream(of: String.self)
        guard let browser else {
            continuation.finish()
            return (nil, failures)
        }
        let observer = self.observer
        do {
            let page = try browser.launchHidingURL(url) { status in
                if status != 0 {
                    let message = "the browser command exited with status \(status)"
                    if announcing { observer.browserLaunchFailed(message) }
                    continuation.yield(message)
                }
                continuation.finish()
            }
            return (page, failures)
        } catch {
            if announcing { observer.browserLaunchFailed(error.description) }
            continuation.yield(error.description)
            continuation.finish()
            return (nil, failures)
        }
    }
}
