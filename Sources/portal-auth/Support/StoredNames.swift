import Foundation
import PortalAuth

/// What shell completion offers from the default store: the stored portals and the sign-in names. Never fails:
/// an unreadable store offers nothing.
enum StoredNames {
    /// The portal URLs of the stored portal sign-ins.
    static func portals() -> [String] {
        guard let store = try? ArcGISCredentialStore.makePersistent() else { return [] }
        return Array(Set(store.credentials.compactMap { $0.kind.oAuthUser?.configuration.portalURL.absoluteString }))
            .sorted()
    }

    /// The names given to stored sign-ins.
    static func names() -> [String] {
        guard let location = try? StoreLocation.resolve(environment: ProcessInfo.processInfo.environment),
            let preferences = try? SignInPreferences.load(forStore: location.path)
        else { return [] }
        return preferences.names.keys.sorted()
    }
}
