public import Foundation
import PortalAuthCore

/// Opens a URL in the user's browser. The sign-in flow calls it once per sign-in.
///
/// A failed launch is never fatal: the flow always prints the URL too.
public protocol BrowserOpener: Sendable {
    /// Starts the browser on `url` and returns without waiting for it.
    ///
    /// - Parameters:
    ///   - url: the address to open.
    ///   - onExit: called from a background thread when the launched command exits,
    ///     with its exit status (a launcher like `xdg-open` exits at once; non-zero means it failed).
    func open(_ url: URL, onExit: @escaping @Sendable (Int32) -> Void) throws(BrowserError)

    /// Whether this browser reaches the person even where ``SignInEnvironment`` sees no display or an SSH session:
    /// a browser the person or the app chose (`$BROWSER`, ``SignInSettings/browserCommand(_:arguments:)``, WSL's
    /// Windows browser, an app's own window) rather than the desktop's launcher `xdg-open`, which needs a display.
    /// ``SignInMethod/automatic`` tries such a browser wherever it runs, and takes the remote path at once when it
    /// fails to start or exits with a failure. The default is false.
    var isVisibleWithoutDisplay: Bool { get }
}

extension BrowserOpener {
    public var isVisibleWithoutDisplay: Bool { false }
}

/// An opener that starts another program with `url` in its arguments and hides it from other local users behind a
/// ``BrowserLaunchPage``, as `CommandBrowserOpener` does.
package protocol LaunchPageBrowserOpener: BrowserOpener {
    /// Starts the browser on `url` through a launch page and returns the page, for the caller to remove.
    func launch(_ url: URL, onExit: @escaping @Sendable (Int32) -> Void) throws(BrowserError) -> BrowserLaunchPage?
}

extension BrowserOpener {
    /// Starts the browser on `url` without exposing `url` to other local users, and returns what to remove once the
    /// sign-in (or logout) is over: the sign-in flows call this, and remove the page when they end.
    ///
    /// An opener that keeps `url` in the process (a test double, an embedding application) is called through
    /// ``open(_:onExit:)``, and there is no page (`nil`); a ``LaunchPageBrowserOpener`` through its launch page.
    package func launchHidingURL(_ url: URL, onExit: @escaping @Sendable (Int32) -> Void) throws(BrowserError)
        -> BrowserLaunchPage?
    {
        if let opener = self as? any LaunchPageBrowserOpener {
            return try opener.launch(url, onExit: onExit)
        }
        try open(url, onExit: onExit)
        return nil
    }
}

/// A browser that could not be started.
public struct BrowserError: Error, Sendable, CustomStringConvertible, CategorizedError {
    /// The command that could not be started.
    public let command: String
    /// Why.
    public let reason: String

    public var category: ErrorCategory { .local }
    public var description: String {
        "could not start the browser command" + MessagePart.given(" `", command, "`") + MessagePart.given(": ", reason)
    }
}
