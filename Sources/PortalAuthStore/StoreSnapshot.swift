/// The entries of the credential store as read at one moment, and the changes made to them since.
///
/// Entries are JSON objects keyed by a string (the credentials layer chooses keys and contents; the store
/// does not look inside). ``isChanged`` tells whether anything differs from what was read, so an update
/// that changes nothing writes nothing.
package import PortalAuthCore

package struct StoreSnapshot: Sendable, Equatable {
    /// The entries, by key.
    package private(set) var entries: [String: JSONObject]

    /// The entries as they were read.
    private let original: [String: JSONObject]

    /// Set when this update found the store corrupted and moved it aside (see ``CorruptedStorePolicy``).
    package let recovery: CorruptedStoreRecovery?

    /// A snapshot of `entries` as read from the store.
    package init(entries: [String: JSONObject] = [:], recovery: CorruptedStoreRecovery? = nil) {
        self.entries = entries
        self.original = entries
        self.recovery = recovery
    }

    // MARK: - Reading

    /// The keys, sorted.
    package var keys: [String] { entries.keys.sorted() }

    /// True when there are no entries.
    package var isEmpty: Bool { entries.isEmpty }

    /// The entry stored under `key`.
    package func entry(for key: String) -> JSONObject? { entries[key] }

    /// True when the entries differ from what was read.
    package var isChanged: Bool { entries != original }

    // MARK: - Changing

    /// Stores `entry` under `key`, replacing any entry there.
    package mutating func set(_ entry: JSONObject, for key: String) { entries[key] = entry }

    /// Removes the entry under `key` and returns it.
    @discardableResult
    package mutating func remove(_ key: String) -> JSONObject? { entries.removeValue(forKey: key) }

    /// Removes every entry.
    package mutating func removeAll() { entries.removeAll() }
}
