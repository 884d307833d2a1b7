import Foundation
import Logging
import PortalAuthCore
import PortalAuthStore
import Synchronization

/// The private file a persistent `NetworkCredentialStore` keeps its credentials in where no desktop keyring can be
/// used: the items the keyring would hold (attributes and secret, see `NetworkCredentialKeyring`), one entry each, in
/// a store file of its own beside the credential store file (`credentials-network.json` beside `credentials.json`),
/// with the same protection: 0600 in a 0700 folder, atomic writes under the file's lock.
///
/// As `ArcGISCredentialStore.add(_:)` does, a change is made in memory at once and written in the background, one
/// write after another; each write applies the one change to the file as re-read under its lock, so two processes
/// adding credentials keep both. A failed write is logged and thrown by `waitForPersistence()`.
final class NetworkCredentialFile: SecretItemStorage {
    /// One item: what the keyring would hold.
    private struct Item: Sendable, Equatable {
        var schema: String
        var attributes: [String: String]
        var secret: String
    }

    /// The store file of the items.
    let file: CredentialStoreFile
    private let items: Mutex<[String: Item]>
    private let persistence = StorePersistenceQueue()
    private let logger: Logger

    /// The items of the file at `path`, read now.
    ///
    /// - Throws: `CredentialStoreError` for unsafe permissions, a corrupted or newer-format file.
    init(path: String, logger: Logger) throws(CredentialStoreError) {
        file = CredentialStoreFile(location: StoreLocation(path: path))
        self.logger = logger
        var loaded: [String: Item] = [:]
        for (key, entry) in try file.read().entries {
            if let item = Self.item(from: entry) { loaded[key] = item }
        }
        items = Mutex(loaded)
    }

    /// The network credentials' file beside the credential store file at `storePath`: `NAME-network.json` for
    /// `NAME.json` (or `NAME`).
    static func path(besideStoreAt storePath: String) -> String {
        let base = storePath.hasSuffix(".json") ? String(storePath.dropLast(".json".count)) : storePath
        return base + "-network.json"
    }

    /// Waits until every change made so far has reached the file; throws the first write failure since the last wait.
    func waitForPersistence() async throws {
        _ = try await persistence.waitForAll()
    }

    // MARK: - SecretItemStorage

    /// The file can always be used; its permissions were checked when it was read.
    func probe() throws(KeyringError) {}

    func store(_ secret: String, attributes: [String: String], label: String, schema: SecretSchemaName)
        throws(KeyringError)
    {
        let key = Self.key(attributes, schema)
        let item = Item(schema: Self.name(of: schema), attributes: attributes, secret: secret)
        items.withLock { $0[key] = item }
        let entry = Self.entry(for: item)
        write { snapshot in snapshot.set(entry, for: key) }
    }

    func lookup(attributes: [String: String], schema: SecretSchemaName) throws(KeyringError) -> String? {
        items.withLock { items in items.values.first { Self.matches($0, attributes, schema) }?.secret }
    }

    @discardableResult
    func clear(attributes: [String: String], schema: SecretSchemaName) throws(KeyringError) -> Bool {
        let removed = items.withLock { items in
            let keys = items.filter { Self.matches($0.value, attributes, schema) }.map(\.key)
            keys.forEach { items[$0] = nil }
            return !keys.isEmpty
        }
        write { snapshot in
            for key in snapshot.keys {
                if let item = snapshot.entry(for: key).flatMap(Self.item(from:)), Self.matches(item, attributes, schema)
                {
                    snapshot.remove(key)
                }
            }
        }
        return removed
    }

    func search(attributes: [String: String], schema: SecretSchemaName) throws(KeyringError) -> [[String: String]] {
        items.withLock { items in items.values.filter { Self.matches($0, attributes, schema) }.map(\.attributes) }
    }

    // MARK: - Helpers

    /// Queues a change of the file, applied to it as re-read under its lock.
    private func write(_ change: @escaping @Sendable (inout StoreSnapshot) -> Void) {
        let file = self.file
        persistence.runInBackground(logger: logger, storePath: file.path) {
            try await file.update(onCorruption: .keepAsideAndStartEmpty) { snapshot in
                change(&snapshot)
                return snapshot.recovery
            }
        }
    }

    private static func matches(_ item: Item, _ attributes: [String: String], _ schema: SecretSchemaName) -> Bool {
        item.schema == name(of: schema) && attributes.allSatisfy { item.attributes[$0.key] == $0.value }
    }

    /// The entry key of an item: its schema and attributes, sorted (the same attributes replace each other, as in
    /// the keyring).
    private static func key(_ attributes: [String: String], _ schema: SecretSchemaName) -> String {
        ([name(of: schema)] + attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }).joined(
            separator: "\n")
    }

    private static func name(of schema: SecretSchemaName) -> String {
        switch schema {
        case .credential: return "credential"
        case .network: return "network"
        case .appNetwork: return "app-network"
        }
    }

    private static func entry(for item: Item) -> JSONObject {
        JSONObject([
            (key: "schema", value: .string(item.schema)),
            (
                key: "attributes",
                value: .object(
                    JSONObject(
                        item.attributes.sorted { $0.key < $1.key }.map {
                            (key: $0.key, value: JSONValue.string($0.value))
                        }))
            ),
            (key: "secret", value: .string(item.secret)),
        ])
    }

    private static func item(from entry: JSONObject) -> Item? {
        guard let schema = entry["schema"]?.stringValue, let secret = entry["secret"]?.stringValue,
            let attributes = entry["attributes"]?.objectValue
        else { return nil }
        var strings: [String: String] = [:]
        for (key, value) in attributes.members {
            guard let string = value.stringValue else { return nil }
            strings[key] = string
        }
        return Item(schema: schema, attributes: strings, secret: secret)
    }
}
