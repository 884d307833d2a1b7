package import Foundation
import PortalAuthCore
import PortalAuthStore
import PortalAuthTransport

/// What the user chose about the stored sign-ins: the default one, the names given to them, and the apps signed
/// in to portals before (so a suggested `--interactive` or `login` command can name the client ID after the
/// sign-in itself was revoked).
///
/// Kept beside the store file, in `<store>.preferences.json` (0600): never a token, so a store backend that keeps
/// tokens elsewhere can keep this file as it is. Entries point at sign-ins by store key. Written atomically; two
/// `portal-auth use` at the same instant may lose one of the choices, never the file.
package struct SignInPreferences: Sendable, Equatable {
    /// A portal app signed in to before: enough to sign in again without asking for its client ID.
    package struct RememberedApp: Sendable, Equatable {
        package var portalURL: URL
        package var clientID: String
        package var redirectURL: URL?

        package init(portalURL: URL, clientID: String, redirectURL: URL?) {
            self.portalURL = portalURL
            self.clientID = clientID
            self.redirectURL = redirectURL
        }
    }

    /// The store key of the default sign-in (`portal-auth use`).
    package var defaultKey: String?
    /// Names given to sign-ins: name → store key.
    package var names: [String: String] = [:]
    /// Portal apps signed in to, newest first.
    package var apps: [RememberedApp] = []

    package init(defaultKey: String? = nil, names: [String: String] = [:], apps: [RememberedApp] = []) {
        self.defaultKey = defaultKey
        self.names = names
        self.apps = apps
    }

    // MARK: - Queries

    /// The name given to the sign-in with `key`, if any (the first in alphabetical order).
    package func name(of key: String) -> String? {
        names.filter { $0.value == key }.keys.sorted().first
    }

    /// The app last signed in to `portalURL` with (and `clientID`, when given).
    package func app(for portalURL: URL, clientID: String? = nil) -> RememberedApp? {
        let wanted = OAuthUserConfiguration.normalizedPortalURL(portalURL)
        return apps.first {
            OAuthUserConfiguration.normalizedPortalURL($0.portalURL) == wanted
                && (clientID == nil || $0.clientID == clientID)
        }
    }

    /// Whether `name` can name a sign-in: letters, digits, `-`, `_`, `.`, `@`, 1 to 64 characters, not starting with `-`.
    package static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 64 && !name.hasPrefix("-")
            && name.unicodeScalars.allSatisfy {
                $0.isASCII
                    && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.@".unicodeScalars.contains($0))
            }
    }

    // MARK: - Changes

    /// Records `app` as the newest app for its portal and client ID.
    package mutating func remember(_ app: RememberedApp) {
        let portal = OAuthUserConfiguration.normalizedPortalURL(app.portalURL)
        apps.removeAll {
            OAuthUserConfiguration.normalizedPortalURL($0.portalURL) == portal && $0.clientID == app.clientID
        }
        apps.insert(app, at: 0)
        if apps.count > 50 { apps.removeLast(apps.count - 50) }
    }

    /// Moves everything that points at `old` to `new` (a sign-in stored under a new key).
    package mutating func rekey(_ old: String, to new: String) {
        if defaultKey == old { defaultKey = new }
        for (name, key) in names where key == old { names[name] = new }
    }

    /// Drops the default and names that point at keys not in `keys` (sign-ins that were deleted).
    package mutating func forgetAllBut(_ keys: Set<String>) {
        if let key = defaultKey, !keys.contains(key) { defaultKey = nil }
        names = names.filter { keys.contains($0.value) }
    }

    // MARK: - File

    /// The preferences file for the store file at `storePath`: `credentials.json` → `credentials.preferences.json`.
    package static func path(forStore storePath: String) -> String {
        let base = storePath.hasSuffix(".json") ? String(storePath.dropLast(5)) : storePath
        return base + ".preferences.json"
    }

    /// The preferences kept for the store file at `storePath`; empty when there is no file yet.
    ///
    /// - Throws: `SelectionError` when the file exists but is not a preferences document (the path is named).
    package static func load(forStore storePath: String) throws(SelectionError) -> SignInPreferences {
        let path = path(forStore: storePath)
        guard let data = FileManager.default.contents(atPath: path) else { return SignInPreferences() }
        guard let object = (try? JSONValue.parse(data))?.objectValue else {
            throw .unreadablePreferences(path)
        }
        var preferences = SignInPreferences()
        preferences.defaultKey = object["default"]?.stringValue
        for (name, key) in object["names"]?.objectValue?.members ?? [] {
            if let key = key.stringValue { preferences.names[name] = key }
        }
        preferences.apps =
            object["apps"]?.arrayValue?.compactMap { value -> RememberedApp? in
                guard let portal = value["portal_url"]?.stringValue.flatMap(URL.init(string:)),
                    let clientID = value["client_id"]?.stringValue
                else { return nil }
                return RememberedApp(
                    portalURL: portal, clientID: clientID,
                    redirectURL: value["redirect_url"]?.stringValue.flatMap(URL.init(string:)))
            } ?? []
        return preferences
    }

    /// Writes the preferences for the store file at `storePath` (atomically, 0600).
    package func save(forStore storePath: String) throws(CredentialStoreError) {
        var object = JSONObject()
        object["default"] = defaultKey.map { .string($0) } ?? .null
        object["names"] = .object(
            JSONObject(names.sorted { $0.key < $1.key }.map { (key: $0.key, value: JSONValue.string($0.value)) }))
        object["apps"] = .array(
            apps.map { app in
                var entry = JSONObject()
                entry["portal_url"] = .string(app.portalURL.absoluteString)
                entry["client_id"] = .string(app.clientID)
                entry["redirect_url"] = app.redirectURL.map { .string($0.absoluteString) } ?? .null
                return .object(entry)
            })
        try StoreFileSystem.ensurePrivateDirectory(StoreFileSystem.parentDirectory(of: storePath))
        try AtomicFileWriter.write(
            Data((JSONValue.object(object).serialized(indent: 2) + "\n").utf8), to: Self.path(forStore: storePath))
    }
}
