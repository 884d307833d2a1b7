/// A failure of the custom-scheme redirect path: the private channel between a waiting sign-in and the scheme's
/// handler, or the handler's registration with the desktop.
///
/// Descriptions name the scheme, folder, file or command involved and what to do next; never the address the
/// handler received (it carries the authorization code and the state).
import PortalAuthCore
import PortalAuthStore

public struct SchemeRedirectError: CategorizedError, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, for matching without reading messages.
    public enum Kind: Sendable, Hashable {
        /// `XDG_RUNTIME_DIR` is not set, or the folder for the channel is not private to this user.
        case runtimeDirectory
        /// Creating, binding or connecting the Unix socket failed.
        case socketFailed
        /// The handler found no sign-in waiting.
        case noWaitingSignIn
        /// Sign-ins are waiting, but none of them sent the request this address answers.
        case noMatchingSignIn
        /// A custom-scheme redirect without a desktop session, and no way to paste the final address.
        case noDesktopSession
        /// The scheme is handled by another application (registration without `force`).
        case schemeOwnedByAnotherApplication
        /// The scheme is not registered with the desktop for this handler.
        case notRegistered
        /// A desktop tool (`xdg-mime`, `update-desktop-database`) is missing or failed, or a file could not be written.
        case registrationFailed
        /// The scheme or redirect URL is not a custom scheme.
        case invalidScheme
    }

    /// What went wrong.
    public let kind: Kind
    private let message: String

    init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }

    public var category: ErrorCategory {
        switch kind {
        case .runtimeDirectory, .socketFailed, .registrationFailed: .local
        case .noWaitingSignIn, .noMatchingSignIn: .invalidContent
        case .noDesktopSession, .schemeOwnedByAnotherApplication, .invalidScheme: .usage
        case .notRegistered: .refused
        }
    }

    // MARK: - Factories

    static func noDesktopSession(_ redirect: CustomSchemeRedirect) -> SchemeRedirectError {
        SchemeRedirectError(
            .noDesktopSession,
            "the redirect URL \(redirect) has a custom scheme, which only a desktop session can hand back to this program, "
                + "and neither DISPLAY nor WAYLAND_DISPLAY is set; sign in on a terminal to paste the final address the browser "
                + "tries to open (starting with \(redirect.scheme):), or use a loopback redirect URL such as http://127.0.0.1/callback."
        )
    }

    static func socket(_ what: String, path: String, _ error: SystemError) -> SchemeRedirectError {
        SchemeRedirectError(
            .socketFailed,
            "cannot \(MessagePart.or(what, "use")) the sign-in channel\(MessagePart.given(" ", path)): \(error)")
    }
}
