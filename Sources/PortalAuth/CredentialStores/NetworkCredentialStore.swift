public import Foundation
import Logging
import PortalAuthStore
import PortalAuthTransport
import Synchronization

/// The network credentials an app holds, one of each kind per protection space (host and port).
///
/// `NetworkCredentialStore()` keeps them in memory only, for the life of the process. A store from
/// ``makePersistent(access:synchronizesWithiCloud:)`` also keeps them where the credential store keeps its secrets:
/// in the desktop keyring (the Secret Service) when one answers and is unlocked, else in a private file (0600) beside
/// the credential store file; ``storageLocation`` says which. Passwords, the PKCS#12 files' passwords (with the
/// file's path) and trusted server certificates are there in the next session, and removals remove them there.
///
/// ```swift
/// let store = NetworkCredentialStore()
/// try await store.add(.password(username: "alice", password: secret), for: ProtectionSpace(url: url)!)
/// try await store.trust(try await ServerCertificateProbe().certificate(of: url), for: ProtectionSpace(url: url)!)
/// for credential in await store.credentials(forHost: "gis.example.com") {
///     if case .password(let password) = credential { print(password.username) }
/// }
/// var request = TransportRequest.get(url)
/// request.credentials = await store.transportCredentials(for: url)
/// ```
public actor NetworkCredentialStore {
    /// The credentials of one protection space.
    private struct Entry {
        var password: PasswordCredential?
        var certificate: CertificateCredential?
        /// The server certificate trusted for the space.
        var trustedCertificate: CertificateInfo?

        var all: [NetworkCredential] {
            [
                password.map(NetworkCredential.password), certificate.map(NetworkCredential.certificate),
                trustedCertificate.map { _ in NetworkCredential.serverTrust },
            ].compactMap { $0 }
        }
    }

    private var entries: [ProtectionSpace: Entry] = [:] {
        didSet { spaceCount.store(entries.count, ordering: .releasing) }
    }
    /// How many protection spaces hold a credential, readable without waiting for the actor (see `holdsNothing`).
    private let spaceCount = Atomic<Int>(0)
    /// The keyring (or the file in its place) behind a persistent store; nil in memory.
    private let keyring: NetworkCredentialKeyring?
    /// The file behind a persistent store kept without a keyring.
    private nonisolated let file: NetworkCredentialFile?

    /// Whether the store holds no credential at all: then `AuthenticationManager.data(for:)` skips asking it, which
    /// would cost every request a hop to the store's actor. A credential added meanwhile is used from the next request.
    package nonisolated var holdsNothing: Bool { spaceCount.load(ordering: .acquiring) == 0 }

    /// True when the credentials are also kept in the desktop keyring or a private file (see
    /// ``makePersistent(access:synchronizesWithiCloud:)``).
    public nonisolated var isPersistent: Bool { keyring != nil }

    /// Where the credentials are kept: memory, the desktop keyring or the private file, and why there.
    public nonisolated let storageLocation: CredentialStorageLocation

    /// An empty store.
    public init() {
        keyring = nil
        file = nil
        storageLocation = .memory
    }

    /// A store kept in `keyring` (the desktop keyring, or `file` in its place), loaded from it now.
    init(
        keyring: NetworkCredentialKeyring, file: NetworkCredentialFile? = nil,
        location: CredentialStorageLocation = CredentialStorageLocation(kind: .keyring), now: Date = Date()
    ) throws(KeyringError) {
        self.keyring = keyring
        self.file = file
        self.storageLocation = location
        for (space, loaded) in try keyring.load(now: now).credentials {
            var entry = entries[space] ?? Entry()
            switch loaded {
            case .password(let password): entry.password = password
            case .certificate(let certificate): entry.certificate = certificate
            case .trust(let certificate): entry.trustedCertificate = certificate
            }
            entries[space] = entry
        }
        spaceCount.store(entries.count, ordering: .releasing)  // observers do not run in an initialiser
    }

    /// The ArcGIS Maps SDK's persistent store, with its labels: on Linux the desktop keyring (the Secret Service)
    /// when one can be used, else a private file.
    ///
    /// The place is the one the credential store chooses (`ArcGISCredentialStore.makePersistent(access:synchronizesWithiCloud:)`,
    /// `$PORTAL_AUTH_STORE`, the tool's automatic store): the desktop keyring when a Secret Service answers and its
    /// default collection is unlocked; else — a headless machine, no session bus, a locked keyring, a store file that
    /// records that its secrets stay in it — the private file `credentials-network.json` beside the credential store
    /// file (0600 in a 0700 folder), as gh, az and kubelogin fall back to a private file. ``storageLocation`` says
    /// which, and why. The credentials kept there before are loaded now (a certificate whose PKCS#12 file is gone or
    /// no longer opens is skipped, and left where it is), and every `add`, `trust` and removal also changes the
    /// keyring or the file. These are the shared ones, of which this app's removals remove only those it added; an app's
    /// own: ``makePersistent(access:synchronizesWithiCloud:requiringKeyring:scope:)``. An app that accepts the keyring
    /// only says so: ``makePersistent(access:synchronizesWithiCloud:requiringKeyring:)``. `access` and `synchronizesWithiCloud`
    /// have no Linux meaning (see `KeychainAccess`).
    ///
    /// ```swift
    /// let store = try await NetworkCredentialStore.makePersistent(access: .whenUnlocked)
    /// print(store.storageLocation)   // the desktop keyring, or the private file and why
    /// ```
    ///
    /// The keyring is probed and read on the library's small pool of threads for blocking work (the Secret Service may take seconds to answer), not on
    /// the caller's thread.
    ///
    /// - Throws: a store error (a `CategorizedError`) when the file is used and has unsafe permissions, is corrupted or of a newer
    ///   format; a keyring error (a `CategorizedError`) when the keyring is used and its items cannot be read; `CancellationError` when the
    ///   task is cancelled before the store is read.
    public static func makePersistent(access: KeychainAccess, synchronizesWithiCloud: Bool = false) async throws
        -> NetworkCredentialStore
    {
        try await makePersistent(
            access: access, synchronizesWithiCloud: synchronizesWithiCloud, requiringKeyring: false)
    }

    /// ``makePersistent(access:synchronizesWithiCloud:)``, in the desktop keyring only when `requiringKeyring` is
    /// true: where no usable keyring answers it then throws, and nothing is written to a file.
    ///
    /// ```swift
    /// let store = try await NetworkCredentialStore.makePersistent(access: .whenUnlocked, requiringKeyring: true)
    /// ```
    ///
    /// - Throws: as ``makePersistent(access:synchronizesWithiCloud:)``, and with `requiringKeyring` a keyring error (a `CategorizedError`)
    ///   when no usable keyring answers (`noLibrary`, `noSessionBus`, `noService`, `locked`, `timedOut`).
    public static func makePersistent(
        access: KeychainAccess, synchronizesWithiCloud: Bool = false, requiringKeyring: Bool
    ) async throws -> NetworkCredentialStore {
        try await makePersistent(
            access: access, synchronizesWithiCloud: synchronizesWithiCloud, requiringKeyring: requiringKeyring,
            scope: .shared)
    }

    /// ``makePersistent(access:synchronizesWithiCloud:requiringKeyring:)`` in `scope`, as
    /// `ArcGISCredentialStore.makePersistent(access:synchronizesWithiCloud:requiringKeyring:scope:)`: the app's own
    /// (``CredentialStoreScope/app(_:)``: beside its own store file, or in the keyring under its store's path, seen and
    /// removed by no other app) or the ones it shares with the other apps (``CredentialStoreScope/shared``, the default
    /// of the other forms), where its removals touch only the credentials it added.
    ///
    /// ```swift
    /// let store = try await NetworkCredentialStore.makePersistent(access: .whenUnlocked, scope: .app("com.example.viewer"))
    /// ```
    ///
    /// - Throws: as ``makePersistent(access:synchronizesWithiCloud:requiringKeyring:)``, and
    ///   ``CredentialStoreScope/InvalidIdentifier`` for an app identifier that cannot name a store.
    public static func makePersistent(
        access: KeychainAccess, synchronizesWithiCloud: Bool = false, requiringKeyring: Bool = false,
        scope: CredentialStoreScope
    ) async throws -> NetworkCredentialStore {
        let environment = ProcessInfo.processInfo.environment
        let storage = SecretServiceClient()
        let storeFile = try await BlockingWork.run {
            try CredentialStoreFile.forPersistentStores(
                scope: scope, requiringKeyring: requiringKeyring, environment: environment, storage: storage)
        }
        return try await load(
            beside: storeFile, storage: storage, requiringKeyring: requiringKeyring, environment: environment,
            scope: scope)
    }

    /// The persistent store that goes with the credential store file `storeFile` of `scope`: in the keyring (the
    /// items of `storage`) when the file keeps its secrets there, else in the private file beside it
    /// (`requiringKeyring`: in the keyring or a failure).
    static func load(
        beside storeFile: CredentialStoreFile, storage: any SecretItemStorage, requiringKeyring: Bool,
        environment: [String: String] = ProcessInfo.processInfo.environment, logger: Logger = SignInSettings().logger,
        scope: CredentialStoreScope = .shared
    ) async throws -> NetworkCredentialStore {
        let ownStore = scope.isAppOwn ? storeFile.path : nil
        if storeFile.backend == .keyring || requiringKeyring {
            return try await load(
                from: storage, environment: environment, ownStore: ownStore, owner: scope.owner)
        }
        let path = NetworkCredentialFile.path(besideStoreAt: storeFile.path)
        return try await BlockingWork.run {
            let file = try NetworkCredentialFile(path: path, logger: logger)
            let location = CredentialStorageLocation(kind: .file, path: path, reason: storeFile.backendReason)
            return try NetworkCredentialStore(
                keyring: NetworkCredentialKeyring(storage: file, ownStore: ownStore, owner: scope.owner), file: file,
                location: location)
        }
    }

    /// A persistent store of the items of `storage` (its session bus named in `environment`), probed and read on
    /// `BlockingWork`'s pool: those of the app's own store `ownStore`, or the shared ones, of which `owner`'s alone
    /// are removed.
    static func load(
        from storage: any SecretItemStorage, environment: [String: String] = ProcessInfo.processInfo.environment,
        ownStore: String? = nil, owner: String? = nil
    ) async throws -> NetworkCredentialStore {
        try await BlockingWork.run {
            do throws(KeyringError) {
                try CredentialStoreFile.probe(storage, environment: environment)
            } catch {
                throw KeyringError(
                    error.kind,
                    message: "\(error.message); the network credentials were to be kept in the desktop keyring only "
                        + "(NetworkCredentialStore.makePersistent without requiringKeyring keeps them in a private file instead)"
                )
            }
            let location = CredentialStorageLocation(
                kind: .keyring, reason: "a Secret Service answers and its default collection is unlocked")
            return try NetworkCredentialStore(
                keyring: NetworkCredentialKeyring(storage: storage, ownStore: ownStore, owner: owner),
                location: location)
        }
    }

    /// Waits until every change made so far has reached the private file, for a store kept in one (at once for the
    /// keyring, whose changes are written before they return, and for memory).
    ///
    /// - Throws: the first write failure since the last wait (a store error (a `CategorizedError`), `CancellationError`).
    public nonisolated func waitForPersistence() async throws {
        try await file?.waitForPersistence()
    }

    // MARK: - Changes

    /// Keeps `credential` for `space`, replacing one of the same kind.
    ///
    /// - Throws: a network-credential error (serverTrustUnusable; a `CategorizedError`) for `.serverTrust`: a trust needs the certificate the
    ///   server presented; use `trust(_:for:)` (the manager does, with the certificate of the challenge).
    ///   a keyring error (a `CategorizedError`) when a persistent store cannot write it to the keyring (it is then not kept at all).
    public func add(_ credential: NetworkCredential, for space: ProtectionSpace) throws {
        var entry = entries[space] ?? Entry()
        switch credential {
        case .password(let password):
            try keyring?.save(password, for: space)
            entry.password = password
        case .certificate(let certificate):
            try keyring?.save(certificate, for: space)
            entry.certificate = certificate
        case .serverTrust:
            throw NetworkCredentialError(
                .serverTrustUnusable,
                detail:
                    "no certificate of \(space) is given with the server trust; use trust(_:for:) with the certificate the server presented"
            )
        }
        entries[space] = entry
    }

    /// Trusts `certificate`, the certificate the server of `space` presented, for that space only (a Linux
    /// addition: the SDK's `.serverTrust` answer, with the certificate it is for).
    ///
    /// Later requests to the protection space trust this one certificate as if it were a certificate authority
    /// (libcurl's `CURLOPT_CAINFO_BLOB`), with chain and host-name verification still on: a server there that
    /// presents another self-signed certificate is refused again, and no other host is affected.
    ///
    /// - Throws: a network-credential error (serverTrustUnusable; a `CategorizedError`) when the certificate does not name the space's host —
    ///   the host name is still verified, so trusting such a certificate could not work.
    public func trust(_ certificate: CertificateInfo, for space: ProtectionSpace) throws {
        guard certificate.matches(host: space.host) else {
            throw NetworkCredentialError(
                .serverTrustUnusable,
                detail: "the certificate of \(space) (\(certificate.subject)) is not for the host \(space.host); "
                    + "use the host name the certificate names, or give the server a certificate for \(space.host)")
        }
        try keyring?.save(trust: certificate, for: space)
        var entry = entries[space] ?? Entry()
        entry.trustedCertificate = certificate
        entries[space] = entry
    }

    /// Removes every credential of `space` (from the keyring too, for a persistent store; a keyring that fails
    /// then is not reported here, and the credentials come back with the next `makePersistent`).
    public func remove(for space: ProtectionSpace) {
        try? keyring?.remove(kind: nil, for: space)
        entries[space] = nil
    }

    /// Removes the credential of `kind` for `space`.
    public func remove(_ kind: NetworkCredential.Kind, for space: ProtectionSpace) {
        try? keyring?.remove(kind: kind, for: space)
        guard var entry = entries[space] else { return }
        switch kind {
        case .password: entry.password = nil
        case .certificate: entry.certificate = nil
        case .serverTrust: entry.trustedCertificate = nil
        }
        entries[space] = entry.all.isEmpty ? nil : entry
    }

    /// Removes every credential (from the keyring too, for a persistent store).
    public func removeAll() {
        try? keyring?.remove(kind: nil, for: nil)
        entries.removeAll()
    }

    // MARK: - Lookup

    /// The protection spaces that hold credentials.
    public var protectionSpaces: [ProtectionSpace] {
        entries.keys.sorted { ($0.host, $0.port) < ($1.host, $1.port) }
    }

    /// The credentials kept for `space`: password, certificate, server trust, those present.
    public func credentials(for space: ProtectionSpace) -> [NetworkCredential] {
        entries[space]?.all ?? []
    }

    /// The credentials kept for `host` on any port, as the ArcGIS Maps SDK's `credentials(forHost:)` gives them
    /// (host names compared as `ProtectionSpace` does: without case or trailing dot).
    public func credentials(forHost host: String) -> [NetworkCredential] {
        let wanted = ProtectionSpace(host: host, port: 0).host
        return protectionSpaces.filter { $0.host == wanted }.flatMap { credentials(for: $0) }
    }

    /// The server certificate trusted for `space`, if any.
    public func trustedServerCertificate(for space: ProtectionSpace) -> CertificateInfo? {
        entries[space]?.trustedCertificate
    }

    /// What the transport should present and accept for a request to `url`: everything kept for its protection
    /// space combined, nothing for another space.
    public func transportCredentials(for url: URL) -> TransportCredentials {
        guard let space = ProtectionSpace(url: url), let entry = entries[space] else { return TransportCredentials() }
        var combined = TransportCredentials()
        combined.password = entry.password?.transport
        combined.clientCertificate = entry.certificate?.transport
        combined.trustedServerCertificates = entry.trustedCertificate.map { Data($0.pem.utf8) }
        return combined
    }
}
