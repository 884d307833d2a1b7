import Foundation
import PortalAuthCore

/// Which persistent store an app's credentials go to: a store of its own, or the one it shares with `portal-auth`
/// (the command-line tool) and the other apps that choose it.
///
/// ```swift
/// // The app's own sign-ins, which no other app and not the tool sees or removes:
/// try await manager.setupPersistentCredentialStorage(access: .whenUnlocked, scope: .app("com.example.viewer"))
/// // The sign-ins of `portal-auth login` and of every app that shares them (the default):
/// try await manager.setupPersistentCredentialStorage(access: .whenUnlocked, scope: .shared)
/// ```
///
/// In the ArcGIS Maps SDK the keychain keeps an app's credentials in the app's default access group; apps of one
/// developer share theirs through a keychain access group. Linux has neither: every process of the user can read the
/// user's files and unlocked keyring, so a scope decides which sign-ins an app sees and may remove, not who can read
/// them (see <doc:CredentialStorage>).
///
/// - ``app(_:)``: `$XDG_STATE_HOME/portal-auth/apps/<identifier>/credentials.json` (the keyring's index when the
///   keyring is used; its items carry that path). `PORTAL_AUTH_STORE` does not apply. Signing out empties it.
/// - ``shared``: the tool's store (`$PORTAL_AUTH_STORE`, else `$XDG_STATE_HOME/portal-auth/credentials.json`),
///   the default of `setupPersistentCredentialStorage(access:)` and `makePersistent(access:)`, so that a sign-in made
///   once with `portal-auth login` serves the user's apps too. An app signing out of it removes only the
///   credentials it added itself (recorded with each entry, under ``appIdentifier``): the sign-ins of the tool and of
///   other apps stay, valid, and stay out of its revocations and logouts.
///
/// Network credentials follow the same scope (`NetworkCredentialStore.makePersistent(access:synchronizesWithiCloud:requiringKeyring:scope:)`,
/// and the manager's store after `setupPersistentCredentialStorage(access:synchronizesWithiCloud:requiringKeyring:scope:)`).
public struct CredentialStoreScope: Sendable, Hashable, CustomStringConvertible {
    /// Whether the store is the app's own.
    public let isAppOwn: Bool
    /// The app: the name of its own store, or the name its credentials are added under in the shared store.
    public let appIdentifier: String

    private init(isAppOwn: Bool, appIdentifier: String) {
        self.isAppOwn = isAppOwn
        self.appIdentifier = appIdentifier
    }

    /// The app's own store, named by `identifier`: a reverse-DNS name such as `com.example.viewer`, or any name of
    /// letters, digits, `.`, `_` and `-` (at most 100 characters, not starting with `.`). Two processes of the same
    /// app (the same identifier) share it.
    public static func app(_ identifier: String) -> CredentialStoreScope {
        CredentialStoreScope(isAppOwn: true, appIdentifier: identifier)
    }

    /// The store shared with `portal-auth`, this process's credentials added under its executable's name.
    public static var shared: CredentialStoreScope { shared(as: ProcessInfo.processInfo.processName) }

    /// The store shared with `portal-auth`, this app's credentials added under `identifier` (what it may remove).
    public static func shared(as identifier: String) -> CredentialStoreScope {
        CredentialStoreScope(isAppOwn: false, appIdentifier: identifier)
    }

    /// "the app com.example.viewer's own store", "the store shared with portal-auth (as viewer)".
    public var description: String {
        isAppOwn
            ? "the app \(DisplayText.neutralised(appIdentifier, limit: 100))'s own store"
            : "the store shared with portal-auth (as \(DisplayText.neutralised(appIdentifier, limit: 100)))"
    }

    /// An app identifier that cannot name a store (empty, too long, a path, characters other than letters, digits,
    /// `.`, `_` and `-`).
    public struct InvalidIdentifier: Error, Sendable, CustomStringConvertible, CategorizedError {
        /// The identifier given (shown neutralised).
        public let identifier: String

        public var category: ErrorCategory { .usage }

        public var description: String {
            let shown =
                identifier.isEmpty ? "an empty identifier" : "\"\(DisplayText.neutralised(identifier, limit: 120))\""
            return
                "\(shown) cannot name an app's credential store: give CredentialStoreScope.app(_:) a name of letters, digits, "
                + "'.', '_' and '-', at most 100 characters, not starting with '.', such as \"com.example.viewer\""
        }
    }

    /// `identifier` as a file name, checked.
    func checkedIdentifier() throws(InvalidIdentifier) -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-".unicodeScalars)
        guard !appIdentifier.isEmpty, appIdentifier.unicodeScalars.count <= 100, !appIdentifier.hasPrefix("."),
            appIdentifier.unicodeScalars.allSatisfy(allowed.contains)
        else { throw InvalidIdentifier(identifier: appIdentifier) }
        return appIdentifier
    }

    /// The owner recorded with entries this scope adds to a shared store; nil for an own store (everything in it
    /// is the app's).
    var owner: String? { isAppOwn ? nil : appIdentifier }
}
