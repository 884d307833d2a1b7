import Foundation
import Logging

extension SignInSettings {
    /// A browser command of the app's choosing: `executable` is run with `arguments`, where an argument `%s` is
    /// replaced by the address to open (else the address is appended). Like `$BROWSER`, a named command is tried by
    /// ``SignInMethod/automatic`` whatever the display says; when it cannot start or exits with a failure, the
    /// sign-in takes the remote path at once.
    ///
    /// ```swift
    /// var settings = SignInSettings(browser: SignInSettings.browserCommand("/usr/bin/firefox", arguments: ["--new-window", "%s"]))
    /// ```
    /// The command gets the address of a private page that forwards to the sign-in URL, never the URL itself (other
    /// local users can read a process's arguments); nothing is run through a shell.
    public static func browserCommand(_ executable: String, arguments: [String] = []) -> any BrowserOpener {
        CommandBrowserOpener(executable: executable, arguments: arguments)
    }

    /// Takes the addresses a person pastes from the app (paste-back, out-of-band codes) instead of standard input,
    /// and accepts them (``acceptsPastedRedirect``).
    ///
    /// `provider` is called when an address is needed — after ``SignInObserver/pastedAddressRequested(authorizationURL:expectedRedirect:)``
    /// (or ``SignInObserver/browserFailedPasteRequested(_:expectedRedirect:)``, ``SignInObserver/outOfBandCodeRequested(authorizationURL:)``)
    /// asked the person — and again after ``SignInObserver/pastedRedirectRejected(_:)``; it returns nil when the
    /// person gives up.
    ///
    /// ```swift
    /// settings.takePastedAddresses { await window.askForAddress() }
    /// ```
    public mutating func takePastedAddresses(from provider: @escaping @Sendable () async -> String?) {
        acceptsPastedRedirect = true
        pastedLines = {
            AsyncStream(unfolding: { await provider() })
        }
    }

    /// Whether ``SignInMethod/automatic`` starts the settings' browser: one chosen by the person or the app
    /// (``BrowserOpener/isVisibleWithoutDisplay``: `$BROWSER`, a named command, WSL's Windows browser) wherever it
    /// runs, the desktop's launcher where ``environment`` says it can be seen.
    var browserReachesPerson: Bool {
        guard let browser else { return false }
        return browser.isVisibleWithoutDisplay || environment.canShowBrowser
    }

    /// Why ``SignInMethod/automatic`` does not start the browser, for messages.
    var reasonBrowserUnused: String {
        browser == nil ? "no browser is set" : reasonBrowserCannotShow ?? "no browser can be started here"
    }

    /// Why the environment shows no browser (``SignInEnvironment/reasonBrowserCannotShow``), with what the browser
    /// adds (on WSL: that no Windows browser was found, and the fix), or nil when one can be shown.
    var reasonBrowserCannotShow: String? {
        guard let reason = environment.reasonBrowserCannotShow else { return nil }
        guard let unreached = (browser as? CommandBrowserOpener)?.unreachedReason else { return reason }
        return "\(reason); \(unreached)"
    }

    /// Whether nobody is told what a remote path needs (a URL to open, a code to enter): the observer is the silent
    /// default.
    var tellsNobody: Bool { observer is SilentSignInObserver }

    /// The error for a sign-in that can reach nobody (`reason`: why no browser), logged first with what to set:
    /// without an observer, the log is the app's only trace of it.
    func unheard(_ reason: String) -> SignInError {
        let error = SignInError.unheard(reason)
        logger.error(
            "sign-in stopped: nothing can reach the person",
            metadata: [
                "reason": "\(reason)", "set": "\(error.appAdvice ?? "")",
            ])
        return error
    }

    /// Why no browser is started here for a flow that has no remote path of its own to choose (a logout), or nil
    /// when one is: ``SignInMethod/browser`` always starts it; ``SignInMethod/automatic`` where the environment can
    /// show it, or with no browser set (the observer shows the URL); the other methods never do.
    var remoteReason: String? {
        switch signInMethod {
        case .browser: return nil
        case .automatic: return browser == nil || browserReachesPerson ? nil : reasonBrowserCannotShow
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
    func openBrowserReportingFailures(at url: URL, announcing: Bool = true) -> (
        page: BrowserLaunchPage?, failures: AsyncStream<String>
    ) {
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
