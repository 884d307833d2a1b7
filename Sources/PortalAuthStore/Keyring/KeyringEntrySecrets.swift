/// The keyring side of a store whose entries keep their secrets in Secret Service items (see
/// ``KeyringReference`` for the crash-safe order of writes): reading entries back from their items, writing
/// changed entries as new items, and removing the items nothing names any more.
///
/// A corrupted or foreign item (one whose secret is not an entry this library wrote, or whose attributes lack a
/// generation) is reported through the entry it belongs to and never deleted: it stays in the keyring, where
/// keyring managers show it, and a new sign-in writes a new item beside it.
import PortalAuthCore

package struct KeyringEntrySecrets: Sendable {
    let storage: any SecretItemStorage
    let storePath: String

    /// What an update found in the keyring under the store's lock.
    struct LockedState: Sendable {
        /// The items of each entry key (every item of the store, by its `entry` attribute), when they could be listed.
        var items: [String: [KeyringReference]]?
        /// The item each resolved entry was read from.
        var readFrom: [String: KeyringReference] = [:]
        /// The entries as resolved (compared after the update to see which changed).
        var resolved: [String: JSONObject] = [:]
        /// Entries read from a newer item than the file names: the file must be written even if nothing else changed.
        var adopted: Set<String> = []
    }

    // MARK: - Reading

    /// The entries with those that name an item replaced by the item's entry, without the lock; `missing` when
    /// an item the file names is gone (a writer replaced it meanwhile: read the file again).
    func resolve(_ entries: [String: JSONObject]) -> (entries: [String: JSONObject], missing: Bool) {
        var result = entries
        var missing = false
        for (key, entry) in entries {
            guard let reference = KeyringEntryFormat.reference(in: entry) else { continue }
            do {
                let attributes = KeyringEntryFormat.itemAttributes(storePath: storePath, key: key, reference: reference)
                guard let secret = try storage.lookup(attributes: attributes, schema: .credential) else {
                    // A locked keyring hides its items: say so rather than "missing".
                    try storage.probe()
                    missing = true
                    result[key] = KeyringEntryFormat.unresolvedForm(of: entry, problem: "its keyring item is missing")
                    continue
                }
                if let item = KeyringEntryFormat.entry(fromItemSecret: secret) {
                    result[key] = item
                } else {
                    result[key] = KeyringEntryFormat.unresolvedForm(of: entry, problem: Self.corruptedProblem)
                }
            } catch {
                result[key] = KeyringEntryFormat.unresolvedForm(of: entry, problem: error.description)
            }
        }
        return (result, missing)
    }

    /// The entries resolved under the store's lock, taking over newer items a killed writer left, and what was found.
    ///
    /// With no entry naming an item and `listing` false, the keyring is not asked at all.
    func resolveUnderLock(_ entries: [String: JSONObject], listing: Bool) -> (
        entries: [String: JSONObject], state: LockedState
    ) {
        var state = LockedState()
        let referenced = entries.filter { KeyringEntryFormat.reference(in: $0.value) != nil }
        guard listing || !referenced.isEmpty else {
            state.resolved = entries
            return (entries, state)
        }
        var result = entries
        let items: [String: [KeyringReference]]
        do {
            var grouped: [String: [KeyringReference]] = [:]
            for attributes in try storage.search(
                attributes: KeyringEntryFormat.storeAttributes(storePath: storePath), schema: .credential)
            {
                guard let key = attributes["entry"] else { continue }
                // Items without a usable generation are foreign: listed under no reference, never touched.
                if let reference = KeyringEntryFormat.reference(ofItem: attributes) {
                    grouped[key, default: []].append(reference)
                }
            }
            items = grouped
            state.items = grouped
        } catch {
            for (key, entry) in referenced {
                result[key] = KeyringEntryFormat.unresolvedForm(of: entry, problem: error.description)
            }
            state.resolved = result
            return (result, state)
        }
        for (key, entry) in referenced {
            guard let reference = KeyringEntryFormat.reference(in: entry) else { continue }
            var problem = "its keyring item is missing"
            for candidate in KeyringEntryFormat.candidates(among: items[key] ?? [], for: reference) {
                let attributes = KeyringEntryFormat.itemAttributes(storePath: storePath, key: key, reference: candidate)
                do {
                    guard let secret = try storage.lookup(attributes: attributes, schema: .credential) else { continue }
                    guard let item = KeyringEntryFormat.entry(fromItemSecret: secret) else {
                        problem = Self.corruptedProblem
                        continue
                    }
                    result[key] = item
                    state.readFrom[key] = candidate
                    if candidate != reference { state.adopted.insert(key) }
                    break
                } catch {
                    problem = error.description
                }
            }
            if state.readFrom[key] == nil {
                result[key] = KeyringEntryFormat.unresolvedForm(of: entry, problem: problem)
            }
        }
        state.resolved = result
        return (result, state)
    }

    // MARK: - Writing

    /// The store file's entries for `entries` after an update: each changed entry is written to a new item first
    /// when the keyring holds secrets (`toKeyring`), else kept in the file itself; unresolved entries stay as read.
    ///
    /// - Parameter deferring: when given, a changed entry the keyring cannot take (locked, gone, not answering) is
    ///   kept in the file with its secrets instead of failing the update (``KeyringEntryFormat/deferredForm(of:reason:)``),
    ///   and so are the changed entries after it (without asking the keyring again); `deferring` gets the error once.
    ///   Without it, the keyring's error is thrown.
    func fileEntries(
        for entries: [String: JSONObject], toKeyring: Bool, state: inout LockedState,
        deferring: ((KeyringError) -> Void)? = nil
    ) throws(KeyringError) -> [String: JSONObject] {
        var file: [String: JSONObject] = [:]
        var failure: KeyringError?
        for (key, entry) in entries {
            if KeyringEntryFormat.isUnresolved(entry) {
                file[key] = KeyringEntryFormat.storedForm(ofUnresolved: entry)
            } else if !toKeyring {
                var entry = entry
                entry[KeyringEntryFormat.deferredMember] = nil
                file[key] = entry
            } else if let current = state.readFrom[key], state.resolved[key] == entry {
                // Unchanged: the item it was read from holds it (also an item a killed writer left, taken over).
                file[key] = KeyringEntryFormat.indexForm(of: entry, reference: current)
            } else if let failure {
                file[key] = KeyringEntryFormat.deferredForm(of: entry, reason: failure.message)
            } else {
                let reference = KeyringReference(
                    generation: KeyringEntryFormat.newGeneration(),
                    sequence: KeyringEntryFormat.nextSequence(
                        items: state.items?[key] ?? [], current: state.readFrom[key]))
                do {
                    try storage.store(
                        KeyringEntryFormat.itemSecret(of: entry),
                        attributes: KeyringEntryFormat.itemAttributes(
                            storePath: storePath, key: key, reference: reference),
                        label: KeyringEntryFormat.label(key: key), schema: .credential)
                } catch {
                    guard let deferring else { throw error }
                    failure = error
                    deferring(error)
                    file[key] = KeyringEntryFormat.deferredForm(of: entry, reason: error.message)
                    continue
                }
                state.items?[key, default: []].append(reference)
                file[key] = KeyringEntryFormat.indexForm(of: entry, reference: reference)
            }
        }
        return file
    }

    /// Whether an update must write the file although its entries did not change: an item was taken over, or
    /// secrets are to move (into the keyring, or out of it).
    func needsRewrite(_ entries: [String: JSONObject], toKeyring: Bool, state: LockedState) -> Bool {
        if !state.adopted.isEmpty { return true }
        return entries.contains { key, entry in
            guard !KeyringEntryFormat.isUnresolved(entry) else { return false }
            let inKeyring = state.readFrom[key] != nil && state.resolved[key] == entry
            return inKeyring != toKeyring
        }
    }

    /// Removes the items no file entry names any more (older generations, signed-out entries), after the file
    /// was written. Items that cannot be read as entries are left in place (reported when named).
    func removeLeftovers(fileEntries: [String: JSONObject], state: LockedState) {
        guard let items = state.items else { return }
        for (key, references) in items {
            let kept = fileEntries[key].flatMap(KeyringEntryFormat.reference(in:))
            for reference in references where reference != kept {
                let attributes = KeyringEntryFormat.itemAttributes(storePath: storePath, key: key, reference: reference)
                guard let secret = try? storage.lookup(attributes: attributes, schema: .credential),
                    KeyringEntryFormat.entry(fromItemSecret: secret) != nil
                else { continue }
                _ = try? storage.clear(attributes: attributes, schema: .credential)
            }
        }
    }

    /// Whether any item is left that no file entry names (a removal or a write that a kill interrupted).
    func hasLeftovers(fileEntries: [String: JSONObject], state: LockedState) -> Bool {
        guard let items = state.items else { return false }
        return items.contains { key, references in
            let kept = fileEntries[key].flatMap(KeyringEntryFormat.reference(in:))
            return references.contains { $0 != kept }
        }
    }

    static let corruptedProblem =
        "its keyring item is corrupted or was not written by portal-auth (left in the keyring untouched)"
}
