/// A failure of the desktop keyring (the Secret Service through libsecret): what went wrong and what to do.
///
/// Messages come from libsecret, glib or this library; none holds a secret. All are ``ErrorCategory/local``
/// (exit 70): the machine's keyring needs attention, or the store file is to be used instead.
package import PortalAuthCore

package struct KeyringError: CategorizedError, CustomStringConvertible, Sendable, Equatable {
    /// What went wrong.
    public enum Kind: String, Sendable, Equatable {
        /// libsecret-1.so.0 (Debian `libsecret-1-0`) or glib could not be loaded.
        case noLibrary
        /// No D-Bus session bus could be reached (a headless machine, an SSH session, a container).
        case noSessionBus
        /// Nothing owns `org.freedesktop.secrets` on the session bus: no keyring daemon runs.
        case noService
        /// The default collection is locked, or there is none.
        case locked
        /// The Secret Service did not answer within the time limit.
        case timedOut
        /// Any other failure of the Secret Service.
        case failed
        /// An item holds something this library did not write (a corrupted or foreign item).
        case corruptedItem
    }

    /// What went wrong.
    public let kind: Kind
    /// The explanation (libsecret's or glib's message where there is one).
    public let message: String

    /// An error of `kind` with `message`.
    public init(_ kind: Kind, message: String) {
        self.kind = kind
        self.message = message
    }

    /// Always ``ErrorCategory/local`` (exit 70).
    public var category: ErrorCategory { .local }

    /// What to do about it.
    public var advice: String {
        switch kind {
        case .noLibrary:
            return
                "install libsecret (Debian: apt-get install libsecret-1-0), or keep the tokens in the private store file (PORTAL_AUTH_STORE=file)"
        case .noSessionBus, .noService:
            return
                "start a keyring (on a desktop: log in to its session; headless: gnome-keyring-daemon, unlocked, inside dbus-run-session), or keep the tokens in the private store file (PORTAL_AUTH_STORE=file)"
        case .locked:
            return
                "unlock the keyring (log in to the desktop session, or open Passwords and Keys / seahorse), or keep the tokens in the private store file (PORTAL_AUTH_STORE=file)"
        case .timedOut, .failed:
            return
                "check the keyring daemon (gnome-keyring-daemon, KWallet, KeePassXC), or keep the tokens in the private store file (PORTAL_AUTH_STORE=file)"
        case .corruptedItem:
            return "the item is left in the keyring untouched; sign in again to replace it"
        }
    }

    public var description: String {
        "the desktop keyring cannot be used" + MessagePart.given(": ", message) + "; \(advice)"
    }
}
