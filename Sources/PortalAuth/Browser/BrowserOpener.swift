public import Foundation
import PortalAuthCore

/// Opens a URL in the user's browser. The sign-in flow calls it once per sign-in.
///
/// A failed launch is never fatal: the flow always prints the URL too.
public protocol BrowserOpener: Sendable {
    /// Starts the browser on `url` and returns without waiting for it.
    ///
    /// - Parameter onExit: called from a background thread when the launched command exits,
    ///   with its exit status (a launcher like `xdg-open` exits at once; non-zero means it failed).
    func open(_ url: URL, onExit: @escaping @Sendable (Int32) -> Void) throws(BrowserError)

    /// Starts the browser on `url` without exposing `url` to other local users, and returns what to remove once the
    /// sign-in (or logout) is over: the sign-in flows call this, and remove the page when they end.
    ///
    /// The default calls ``open(_:onExit:)`` and returns `nil`: right for an opener that keeps `url` in the process
    /// (a test double, an embedding application). An opener that starts another program with `url` in its
    /// arguments hides it, as `CommandBrowserOpener` does with a ``BrowserLaunchPage``.
    func launch(_ url: URL, onExit: @escaping @Sendable (Int32) -> Void) throws(BrowserError) -> BrowserLaunchPage?
}

extension BrowserOpener {
    public func launch(_ url: URL, onExit: @escaping @Sendable (Int32) -> Void) throws(BrowserError) -> BrowserLaunchPage? {
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
    public var description: String { "could not start the browser command `\(command)`: \(reason)" }
}
