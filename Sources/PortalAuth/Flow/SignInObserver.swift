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
    public func signInRequestProblem(_ message: String) {}
    public func configurationWarning(_ message: String) {}
}

/// An observer that ignores every event.
public struct SilentSignInObserver: SignInObserver {
    /// Creates the observer.
    public init() {}
}
