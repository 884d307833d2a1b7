import PortalAuthStore

/// Where a credential store keeps its secrets, and why there: what an app reads after making a store persistent
/// (``ArcGISCredentialStore/storageLocation``, ``NetworkCredentialStore/storageLocation``).
///
/// ```swift
/// try await manager.setupPersistentCredentialStorage(access: .whenUnlocked)
/// let location = manager.arcGISCredentialStore.storageLocation
/// if location.kind == .file { showNotice("Sign-ins are kept in \(location.path ?? "a private file"): \(location.reason ?? "")") }
/// ```
public struct CredentialStorageLocation: Sendable, Equatable, CustomStringConvertible {
    /// The kinds of place.
    public enum Kind: String, Sendable, Equatable {
        /// In the process's memory only: gone when it ends.
        case memory
        /// In the desktop keyring (the Secret Service), with an index file that holds no secret.
        case keyring
        /// In a private file (mode 0600 in a 0700 folder) of the user's state directory.
        case file
    }

    /// The kind of place.
    public let kind: Kind
    /// The file: the private store file for ``Kind/file``, the keyring's index file for ``Kind/keyring`` (network
    /// credentials have none there); nil in memory.
    public let path: String?
    /// Why this place was chosen, when it was chosen automatically (for example why the keyring cannot be used).
    public let reason: String?

    /// A location of `kind` at `path`, chosen for `reason`.
    public init(kind: Kind, path: String? = nil, reason: String? = nil) {
        self.kind = kind
        self.path = path
        self.reason = reason
    }

    /// Memory only.
    public static let memory = CredentialStorageLocation(kind: .memory)

    /// The place of a credential store file's secrets.
    init(_ file: CredentialStoreFile) {
        self.init(kind: file.backend == .keyring ? .keyring : .file, path: file.path, reason: file.backendReason)
    }

    /// For example "the private file /home/alice/.local/state/portal-auth/credentials.json (the desktop keyring
    /// cannot be used: no D-Bus session bus …)".
    public var description: String {
        let place: String
        switch kind {
        case .memory: place = "memory only"
        case .keyring: place = path.map { "the desktop keyring (index \($0))" } ?? "the desktop keyring"
        case .file: place = path.map { "the private file \($0)" } ?? "a private file"
        }
        return reason.map { "\(place) (\($0))" } ?? place
    }
}

extension CredentialStoreFile {
    /// The store file of the SDK-shaped persistent stores (`makePersistent(access:)`,
    /// `setupPersistentCredentialStorage(access:)`): the tool's choice (`$PORTAL_AUTH_STORE`, else automatic: the
    /// keyring when it can be used, else the file); with `requiringKeyring`, the keyring whatever the choice, or its
    /// `KeyringError` at once. Blocking (the Secret Service is asked): call it on `BlockingWork`'s pool.
    static func forPersistentStores(
        requiringKeyring: Bool, environment: [String: String], storage: any SecretItemStorage = SecretServiceClient()
    ) throws -> CredentialStoreFile {
        try forPersistentStores(
            scope: .shared, requiringKeyring: requiringKeyring, environment: environment, storage: storage)
    }

    /// ``forPersistentStores(requiringKeyring:environment:storage:)`` in `scope`: the shared store as that chooses
    /// it, or the app's own at its place (`StoreLocation.appStore(identifier:lookup:)`), its secrets where the
    /// automatic choice puts them.
    static func forPersistentStores(
        scope: CredentialStoreScope, requiringKeyring: Bool, environment: [String: String],
        storage: any SecretItemStorage = SecretServiceClient()
    ) throws -> CredentialStoreFile {
        var file: CredentialStoreFile
        if scope.isAppOwn {
            let location = try StoreLocation.appStore(
                identifier: scope.checkedIdentifier(), lookup: { environment[$0] })
            file = automatic(at: location, lookup: { environment[$0] }, storage: storage)
        } else {
            file = try select(store: nil, environment: environment, currentDirectory: nil, storage: storage)
        }
        if requiringKeyring && file.backend != .keyring {
            try probe(storage, environment: environment)
            file.backend = .keyring
            file.backendReason =
                "the app requires the desktop keyring, and a Secret Service answers and its default collection is unlocked"
        }
        return file
    }
}
