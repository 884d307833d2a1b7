public import Foundation

/// Receives the user-facing events of a sign-in, so a front end can show them.
///
/// The library never prints: the command-line tool implements this on the terminal, an app in
/// its window. Events never carry a token, code, verifier or state.
public protocol SignInObserver: Sendable {
    /// The browser should now be on `url`; show it so the user can open it by hand.
    func signInWillOpenBrowser(url: URL, listeningOn redirectURL: URL)
    /// The browser command could not be started or exited with a failure.
    func browserLaunchFailed(_ message: String)
    /// Still waiting for the browser; `remaining` is the time left before the sign-in gives up.
    func waitingForBrowser(remaining: Duration)
    /// A pasted redirect URL could not finish the sign-in; the wait goes on.
    func pastedRedirectRejected(_ message: String)
    /// The callback arrived; the code is being exchanged for tokens.
    func exchangingCode()
    /// No browser is started here (`reason`: no display, an SSH session, a browser command that failed); the
    /// sign-in goes on by a remote path (device code, or pasting the final address back).
    func browserUnavailable(reason: String)
    /// The browser command failed (`message`) and the URL already shown (``signInWillOpenBrowser(url:listeningOn:)``)
    /// stays valid: the person opens it in a browser on any machine and pastes the address it ends on (it starts
    /// with `expectedRedirect`). Ask for it on a line of its own. The default reports ``browserLaunchFailed(_:)``.
    func browserFailedPasteRequested(_ message: String, expectedRedirect: URL)
    /// Paste-back: the person opens `authorizationURL` in a browser on any machine and pastes the address it ends on
    /// (it starts with `expectedRedirect`); ask for it on a line of its own, and draw nothing over what they type.
    func pastedAddressRequested(authorizationURL: URL, expectedRedirect: URL)
    /// Out-of-band: the person opens `authorizationURL` anywhere and pastes the code the page shows.
    func outOfBandCodeRequested(authorizationURL: URL)
    /// Device code (RFC 8628): show the verification page and the user code; polling starts.
    func deviceCodeIssued(_ authorization: DeviceAuthorization)
    /// The identity provider asked to poll less often (`slow_down`); polls are now `interval` apart.
    func deviceCodePollingSlowedDown(interval: Duration)
    /// The identity provider answered the authorization URL with an error page (seen without a browser, so the
    /// browser may still fare better); `message` says what it answered, cleaned of control characters.
    func signInRequestProblem(_ message: String)
    /// Something about the configuration the user should know before signing in, such as a host pattern that
    /// sends the token to every host; show it prominently. The sign-in goes on.
    func configurationWarning(_ message: String)
}

extension SignInObserver {
    public func signInWillOpenBrowser(url: URL, listeningOn redirectURL: URL) {}
    public func browserLaunchFailed(_ message: String) {}
    public func waitingForBrowser(remaining: Duration) {}
    public func pastedRedirectRejected(_ message: String) {}
    public func exchangingCode() {}
    public func browserUnavailable(reason: String) {}
    public func browserFailedPasteRequested(_ message: String, expectedRedirect: URL) { browserLaunchFailed(message) }
    public func pastedAddressRequested(authorizationURL: URL, expectedRedirect: URL) {}
    public func outOfBandCodeRequested(authorizationURL: URL) {}
    public func deviceCodeIssued(_ authorization: DeviceAuthorization) {}
    public func deviceCodePollingSlowedDown(interval: Duration) {}
    public func signInRequestProblem(_ message: String) {}
    public func configurationWarning(_ message: String) {}
}

/// An observer that ignores every event.
package struct SilentSignInObserver: SignInObserver {
    /// Creates the observer.
    public init() {}
}
