import Foundation
package import PortalAuthCore

/// How store entries are split between the store file (the index: who, where, expiry) and keyring items (the
/// whole entry, tokens included), and how items are named. Pure functions, no keyring access.
package enum KeyringEntryFormat {
    /// The entry member naming the keyring item.
    static let referenceMember = "keyring"
    /// Set on an entry whose item could not be read (never written to the file): why, for `status`.
    static let problemMember = "keyring_problem"
    /// Set on a file entry that keeps its secrets in the store file because the keyring could not take them when
    /// they had to be written (a refresh's rotated tokens while the keyring was locked or gone): why. The next
    /// update while the keyring answers moves the entry into it and drops this member.
    static let deferredMember = "keyring_deferred"
    /// The entry members that hold secrets and never go to the file while the keyring holds the entry.
    /// (`password` and `client_secret`: what a `TokenCredential` and an `OAuthApplicationCredential` renew with.)
    static let secretMembers = ["access_token", "refresh_token", "id_token", "password", "client_secret"]

    // MARK: - Attributes

    /// The attributes naming every item of the store at `storePath`.
    static func storeAttributes(storePath: String) -> [String: String] { ["store": storePath] }

    /// The attributes naming the items of one entry.
    static func entryAttributes(storePath: String, key: String) -> [String: String] {
        ["store": storePath, "entry": key]
    }

    /// The attributes naming one item.
    static func itemAttributes(storePath: String, key: String, reference: KeyringReference) -> [String: String] {
        ["store": storePath, "entry": key, "generation": reference.generation, "sequence": String(reference.sequence)]
    }

    /// The item's label, shown by keyring managers (seahorse, `secret-tool search`).
    static func label(key: String) -> String { "portal-auth sign-in \(key)" }

    /// The reference an item's attributes make; nil for an item without a usable generation and sequence.
    static func reference(ofItem attributes: [String: String]) -> KeyringReference? {
        guard let generation = attributes["generation"], !generation.isEmpty,
            let sequenceText = attributes["sequence"], let sequence = Int64(sequenceText), sequence >= 0
        else { return nil }
        return KeyringReference(generation: generation, sequence: sequence)
    }

    // MARK: - Entries

    /// The keyring reference of a file entry; nil when the entry keeps its secrets itself.
    static func reference(in entry: JSONObject) -> KeyringReference? {
        guard let object = entry[referenceMember]?.objectValue,
            let generation = object["generation"]?.stringValue, !generation.isEmpty,
            let sequence = object["sequence"]?.integerValue, sequence >= 0
        else { return nil }
        return KeyringReference(generation: generation, sequence: sequence)
    }

    /// True when the entry names a keyring item but its secrets were not read (the keyring was not reachable, the
    /// item was missing or corrupted): it is written back as it was read.
    static func isUnresolved(_ entry: JSONObject) -> Bool { entry[referenceMember] != nil }

    /// What the file keeps of an entry whose item is `reference`: the entry without its secrets, with the reference.
    static func indexForm(of entry: JSONObject, reference: KeyringReference) -> JSONObject {
        var index = entry
        for member in secretMembers { index[member] = nil }
        index[problemMember] = nil
        index[deferredMember] = nil
        index[referenceMember] = .object([
            "generation": .string(reference.generation), "sequence": .integer(reference.sequence),
        ])
        return index
    }

    /// The unresolved form of a file entry: as the file holds it, with why its secrets are not there.
    static func unresolvedForm(of entry: JSONObject, problem: String) -> JSONObject {
        var unresolved = entry
        unresolved[problemMember] = .string(problem)
        return unresolved
    }

    /// The file form of an unresolved entry: the problem note removed.
    static func storedForm(ofUnresolved entry: JSONObject) -> JSONObject {
        var stored = entry
        stored[problemMember] = nil
        return stored
    }

    /// The item's secret: the whole entry as compact JSON.
    static func itemSecret(of entry: JSONObject) -> String {
        var entry = entry
        entry[deferredMember] = nil
        return JSONValue.object(entry).serialized()
    }

    /// The file form of an entry the keyring could not take: the whole entry, secrets included, with why.
    static func deferredForm(of entry: JSONObject, reason: String) -> JSONObject {
        var deferred = entry
        deferred[referenceMember] = nil
        deferred[problemMember] = nil
        deferred[deferredMember] = .string(reason)
        return deferred
    }

    /// Whether a file entry keeps its secrets in the file because the keyring could not take them.
    package static func isDeferred(_ entry: JSONObject) -> Bool {
        entry[deferredMember] != nil && entry[referenceMember] == nil
    }

    /// The entry an item's secret holds; nil for a corrupted or foreign item (not a JSON object, or one that is
    /// itself a reference).
    package static func entry(fromItemSecret secret: String) -> JSONObject? {
        guard let object = try? JSONValue.parse(secret).objectValue, object[referenceMember] == nil,
            object["kind"]?.stringValue != nil
        else { return nil }
        return object
    }

    // MARK: - Choosing

    /// The items worth reading for an entry the file names with `reference`, best first: newer unnamed writes
    /// (a writer killed before its file write) before the named one; older items are leftovers.
    static func candidates(among items: [KeyringReference], for reference: KeyringReference) -> [KeyringReference] {
        items.filter { $0.sequence > reference.sequence || $0 == reference }.sorted { $0.sequence > $1.sequence }
    }

    /// The sequence number of the next write of an entry whose items and file reference are these.
    static func nextSequence(items: [KeyringReference], current: KeyringReference?) -> Int64 {
        (items.map(\.sequence) + [current?.sequence ?? 0]).max().map { $0 + 1 } ?? 1
    }

    /// A new random generation name (16 random bytes, hex).
    static func newGeneration() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }
}
