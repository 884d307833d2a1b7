import Foundation
import PortalAuth

/// A credential store file written directly in the store's documented format, for running the tool on known
/// sign-ins without an authorization server: tokens valid for hours need no request.
final class PreparedStore: Sendable {
    let directory: URL
    /// The store file (`PORTAL_AUTH_STORE`).
    var path: String { directory.appendingPathComponent("state/credentials.json").path }
    /// The environment that points the tool at this store.
    var environment: [String: String] { ["PORTAL_AUTH_STORE": path] }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("pa-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    // MARK: - Entries

    /// A portal sign-in entry; times in seconds from now.
    static func portal(
        _ portal: String, clientID: String = "app1", username: String = "alice", token: String,
        accessIn: Int = 3600, refreshIn: Int? = 86_400, refused: String? = nil
    ) -> (key: String, entry: JSONObject) {
        var entry: JSONObject = [
            "kind": .string("oauth-user"), "client_id": .string(clientID), "portal_url": .string(portal),
            "redirect_url": .string("http://127.0.0.1/callback"),
            "token_url": .string("\(portal)/sharing/rest/oauth2/token"),
            "username": .string(username), "access_token": .string(token), "access_token_expires_at": at(accessIn),
            "scopes": .array([]), "token_type": .string("Bearer"), "ssl": .bool(false), "created_at": at(0),
            "updated_at": at(0),
        ]
        if let refreshIn {
            entry["refresh_token"] = .string("refresh-\(token)")
            entry["refresh_token_expires_at"] = at(refreshIn)
        }
        if let refused { entry["refresh_token_refused"] = .string(refused) }
        return ("oauth-user|\(portal)|\(clientID)", entry)
    }

    /// An IAP sign-in entry made with the configuration file at `file` (whose endpoints and client ID it copies);
    /// `key` overrides the store key (an older store's path-based key).
    static func iap(file: String, username: String = "bob", token: String, accessIn: Int = 3600, key: String? = nil)
        throws -> (key: String, entry: JSONObject)
    {
        let configuration = try JSONValue.parse(Data(contentsOf: URL(fileURLWithPath: file)))
        let authorize = try string(configuration, "authorize_url"), clientID = try string(configuration, "client_id")
        let entry: JSONObject = [
            "kind": .string("iap"), "client_id": .string(clientID),
            "redirect_url": .string(try string(configuration, "redirect_url")),
            "configuration_file": .string(URL(fileURLWithPath: file).resolvingSymlinksInPath().path),
            "authorize_url": .string(authorize), "token_url": .string(try string(configuration, "token_url")),
            "logout_url": .string(try string(configuration, "logout_url")),
            "hosts_behind_proxy": configuration["hosts_behind_proxy"] ?? .array([]),
            "username": .string(username), "access_token": .string(token), "access_token_expires_at": at(accessIn),
            "refresh_token": .string("refresh-\(token)"), "id_token": .null, "scopes": .array([]),
            "token_type": .string("Bearer"),
            "ssl": .bool(false), "created_at": at(0), "updated_at": at(0),
        ]
        return (key ?? "iap|\(authorize)|\(clientID)|\(username)", entry)
    }

    /// Writes the entries (replacing the file).
    func write(_ entries: [(key: String, entry: JSONObject)]) async throws {
        let file = CredentialStoreFile(location: StoreLocation(path: path))
        try await file.update { snapshot in
            snapshot.removeAll()
            for (key, entry) in entries { snapshot.set(entry, for: key) }
        }
    }

    /// The store file's entries, as written.
    func entries() throws -> [String: JSONValue] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard case .object(let entries)? = try JSONValue.parse(data)["entries"] else { return [:] }
        return Dictionary(uniqueKeysWithValues: entries.members.map { ($0.key, $0.value) })
    }

    // MARK: - Helpers

    private static func at(_ seconds: Int) -> JSONValue {
        .integer(Int64(Date().timeIntervalSince1970) + Int64(seconds))
    }

    private static func string(_ object: JSONValue, _ key: String) throws -> String {
        guard let value = object[key]?.stringValue else { throw CocoaError(.coderValueNotFound) }
        return value
    }
}
