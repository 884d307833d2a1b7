import Foundation

extension CredentialStoreFile {
    /// Moves the secrets of every stored entry to `backend` and records the choice in the store file, so that the
    /// automatic choice follows it: `.file` keeps them in the file even where a keyring answers, `.keyring` makes
    /// the keyring the place again. Sign-ins are kept; the keyring items of entries moved to the file are removed.
    ///
    /// - Returns: the keys of entries that could not be moved (their keyring item is missing, corrupted or not
    ///   reachable); they stay as they were.
    /// - Throws: `KeyringError` when the keyring is the target and cannot be used, or an item cannot be written;
    ///   `CredentialStoreError` for the file.
    package func migrate(to backend: StoreBackend) async throws -> [String] {
        try await migrate(to: backend, environment: ProcessInfo.processInfo.environment)
    }

    /// ``migrate(to:)`` with the environment that says where the session bus is (tests).
    func migrate(to backend: StoreBackend, environment: [String: String]) async throws -> [String] {
        var target = self
        target.backend = backend
        if backend == .keyring { try Self.probe(secretStorage, environment: environment) }
        return try await target.exclusiveAccess(recording: backend) { snapshot in
            snapshot.keys.filter { key in snapshot.entry(for: key).map(KeyringEntryFormat.isUnresolved) ?? false }
        }
    }
}
