import Foundation
import PortalAuthCore

extension CredentialStoreFile {
    /// The words `--store` and `PORTAL_AUTH_STORE` take besides a path.
    public enum Choice: Sendable, Equatable {
        /// The keyring when a Secret Service answers and its default collection is unlocked, else the file (default).
        case automatic
        /// The keyring, or a failure at once (``KeyringError``).
        case keyring
        /// The store file at its default place.
        case file
        /// The store file at this path (as before the keyring existed).
        case path(String)

        /// `auto`, `keyring`, `file` or a path; nil or empty is ``automatic``. A file named like a word is given as
        /// `./keyring`.
        public init(_ text: String?) {
            switch text ?? "" {
            case "", "auto": self = .automatic
            case "keyring": self = .keyring
            case "file": self = .file
            case let path: self = .path(path)
            }
        }
    }

    /// The credential store `store` (the tool's `--store`) or else `PORTAL_AUTH_STORE` chooses (see ``Choice``).
    ///
    /// The index file lives at the default place (`$XDG_STATE_HOME/portal-auth/credentials.json`) unless a path is
    /// given. The automatic choice follows a place the file records (`portal-auth store migrate`), else asks the
    /// Secret Service (at most a few seconds; at once when no session bus is set) and says why in ``backendReason``.
    ///
    /// - Throws: a keyring error (a `CategorizedError`) when the keyring is chosen and cannot be used (absent, locked, not answering);
    ///   a store error (a `CategorizedError`) when no location can be derived.
    /// - Parameters:
    ///   - store: `auto`, `keyring`, `file` or a store file's path (the tool's `--store`); `nil` leaves the choice to
    ///     `PORTAL_AUTH_STORE`, else `auto`.
    ///   - environment: the variables that choose the store (`PORTAL_AUTH_STORE`, `XDG_STATE_HOME`, `HOME`,
    ///     `DBUS_SESSION_BUS_ADDRESS`, `XDG_RUNTIME_DIR`); others are not read.
    ///   - currentDirectory: the folder a relative store path is taken from; the process's own when `nil`.
    public static func select(store: String? = nil, environment: [String: String], currentDirectory: String? = nil)
        throws -> CredentialStoreFile
    {
        try select(
            store: store, environment: environment, currentDirectory: currentDirectory, storage: SecretServiceClient())
    }

    /// ``select(store:environment:currentDirectory:)`` reading each variable through `lookup` (for example
    /// ``ProcessEnvironment/value(of:)``) instead of from a dictionary: `portal-auth token` then makes no dictionary
    /// (see ``ProcessEnvironment/value(of:)``).
    package static func select(store: String? = nil, lookup: (String) -> String?, currentDirectory: String? = nil)
        throws -> CredentialStoreFile
    {
        try select(store: store, lookup: lookup, currentDirectory: currentDirectory, storage: SecretServiceClient())
    }

    /// ``select(store:environment:currentDirectory:)`` with the keyring access given (tests).
    package static func select(
        store: String?, environment: [String: String], currentDirectory: String?, storage: any SecretItemStorage
    ) throws -> CredentialStoreFile {
        try select(store: store, lookup: { environment[$0] }, currentDirectory: currentDirectory, storage: storage)
    }

    /// The one implementation of the selection: the others call it.
    package static func select(
        store: String?, lookup: (String) -> String?, currentDirectory: String?, storage: any SecretItemStorage
    ) throws -> CredentialStoreFile {
        let given = store.flatMap { $0.isEmpty ? nil : $0 } ?? lookup(StoreLocation.environmentVariable)
        let choice = Choice(given)
        // The default place ignores PORTAL_AUTH_STORE (it chose the word, not a path).
        func defaults(_ name: String) -> String? { name == StoreLocation.environmentVariable ? nil : lookup(name) }
        var file: CredentialStoreFile
        switch choice {
        case .path(let path):
            let source: StoreLocation.Source = store.flatMap { $0.isEmpty ? nil : $0 } != nil ? .explicit : .environment
            file = CredentialStoreFile(
                location: StoreLocation(path: path, source: source, currentDirectory: currentDirectory))
            file.secretStorage = storage
            return file
        case .file:
            file = CredentialStoreFile(location: try StoreLocation.resolve(lookup: defaults))
            file.secretStorage = storage
            return file
        case .keyring:
            file = CredentialStoreFile(location: try StoreLocation.resolve(lookup: defaults))
            file.secretStorage = storage
            try probe(storage, lookup: lookup)
            file.backend = .keyring
            return file
        case .automatic:
            return automatic(at: try StoreLocation.resolve(lookup: defaults), lookup: lookup, storage: storage)
        }
    }

    /// The store at `location`, with its secrets where the automatic choice puts them: where the file records
    /// (`portal-auth store migrate`), else in the keyring when it can be used, else in the file.
    package static func automatic(
        at location: StoreLocation, lookup: (String) -> String?, storage: any SecretItemStorage
    ) -> CredentialStoreFile {
        var file = CredentialStoreFile(location: location)
        file.secretStorage = storage
        // Through the store's own reader: the same checks and the single parse of every read.
        if (try? file.readFile())?.recorded == .file {
            file.backendReason = "the store file records that its secrets stay in it (it was migrated to the file)"
            return file
        }
        do {
            try probe(storage, lookup: lookup)
            file.backend = .keyring
            file.backendReason = "a Secret Service answers and its default collection is unlocked"
        } catch {
            file.backendReason = "the desktop keyring cannot be used: \(error.message)"
        }
        return file
    }

    /// Checks that the keyring can be used; without a session bus address (nor `$XDG_RUNTIME_DIR/bus`) it fails at
    /// once, without loading libsecret (and without glib starting a bus of its own).
    package static func probe(_ storage: any SecretItemStorage, environment: [String: String]) throws(KeyringError) {
        try probe(storage, lookup: { environment[$0] })
    }

    /// ``probe(_:environment:)`` reading each variable through `lookup`.
    package static func probe(_ storage: any SecretItemStorage, lookup: (String) -> String?) throws(KeyringError) {
        let address = lookup("DBUS_SESSION_BUS_ADDRESS") ?? ""
        let runtimeDirectory = lookup("XDG_RUNTIME_DIR") ?? ""
        let runtimeBus = runtimeDirectory.isEmpty ? nil : runtimeDirectory + "/bus"
        if address.isEmpty && !(runtimeBus.map { FileManager.default.fileExists(atPath: $0) } ?? false) {
            throw KeyringError(.noSessionBus, message: "no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set)")
        }
        try storage.probe()
    }
}

extension CredentialStoreFile {
    /// The entries that keep their secrets in the desktop keyring (the index names their items), with why the keyring
    /// cannot be used now (no session bus, as under cron, no Secret Service, a locked keyring); nil when no entry keeps
    /// its secrets there, or the keyring answers.
    ///
    /// - Parameter lookup: the variables that say where the session bus is (`DBUS_SESSION_BUS_ADDRESS`,
    ///   `XDG_RUNTIME_DIR`).
    package func unreachableKeyringEntries(lookup: (String) -> String?) -> (keys: [String], problem: KeyringError)? {
        guard let entries = try? readFile().entries else { return nil }
        let keys = entries.filter { KeyringEntryFormat.reference(in: $0.value) != nil }.keys.sorted()
        guard !keys.isEmpty else { return nil }
        do throws(KeyringError) {
            try Self.probe(secretStorage, lookup: lookup)
            return nil
        } catch {
            return (keys, error)
        }
    }

    /// Why entries that name a keyring item could not be read (the item is missing or corrupted, the keyring is
    /// locked or absent), by entry key; empty when all could.
    package func keyringProblems() -> [String: String] {
        guard let snapshot = try? read() else { return [:] }
        return snapshot.entries.compactMapValues { $0[KeyringEntryFormat.problemMember]?.stringValue }
    }
}
