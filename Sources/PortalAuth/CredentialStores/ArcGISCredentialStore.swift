public import Foundation
import PortalAuthCore
import PortalAuthStore
import PortalAuthTransport
import Synchronization

/// The ArcGIS credentials an app or the tool holds, in memory or persisted in the credential store
/// file (one file per user, 0600, written atomically under a lock).
///
/// ```swift
/// let store = try ArcGISCredentialStore.makePersistent()
/// if let credential = store.credential(for: URL(string: "https://www.arcgis.com/sharing/rest/portals/self")!) { … }
/// store.add(credential)                       // in memory now, in the file a moment later
/// try await store.waitForPersistence()        // the file written, or the write's error
/// ```
///
/// Every kind of credential is kept: OAuth user and IAP sign-ins (refreshed under the file's lock), and
/// `TokenCredential`, `OAuthApplicationCredential` and `PregeneratedTokenCredential` (with the password or client
/// secret the first two renew with), so that a restarted app finds them all.
///
/// As in the ArcGIS Maps SDK, `add(_:)` and `removeAll()` are synchronous and do not throw: the credentials in
/// memory change at once and the file follows, one write after another in order. A write that fails is logged
/// (`error` level, on the settings' `Logger`) and thrown by the next `waitForPersistence()`. `addAndPersist(_:)`
/// and `removeAllAndPersist()` are the forms that wait for the file and throw.
public final class ArcGISCredentialStore: Sendable {
    private let held: Mutex<[ArcGISCredential]>
    private let persistence = StorePersistenceQueue()
    /// The file behind a persistent store; `nil` for an in-memory one.
    package let file: CredentialStoreFile?
    /// Where the credentials are kept: memory, the desktop keyring (with its index file) or the private store file,
    /// and why there.
    public var storageLocation: CredentialStorageLocation { file.map(CredentialStorageLocation.init) ?? .memory }
    /// Store keys of entries that could not be read back (shown by `status`; never their content).
    public let unreadableEntries: [String]
    private let settings: SignInSettings
    /// The app that adds to a store it shares (``CredentialStoreScope/shared(as:)``): its additions are marked with
    /// it, and only they are removed; nil where everything may be removed (an app's own store, memory, the tool).
    package let owner: String?

    /// An empty in-memory store.
    public init() {
        self.held = Mutex([])
        self.file = nil
        self.unreadableEntries = []
        self.settings = SignInSettings()
        self.owner = nil
    }

    private init(
        file: CredentialStoreFile, credentials: [ArcGISCredential], unreadable: [String], settings: SignInSettings,
        owner: String?
    ) {
        self.held = Mutex(credentials)
        self.file = file
        self.unreadableEntries = unreadable
        self.settings = settings
        self.owner = owner
    }

    /// A store persisted in the store file, loaded now: the keyring with its index in the XDG state directory when
    /// one answers, else the file; `$PORTAL_AUTH_STORE`.
    ///
    /// - Parameters:
    ///   - settings: the HTTP client and refresh policy the loaded credentials use.
    ///   - startingOverIfCorrupted: when the file is corrupted, start with no credentials instead of
    ///     failing; the next `add` keeps the corrupted file aside (renamed, never overwritten) and says where.
    /// - Throws: a store error (a `CategorizedError`) for unsafe permissions, a corrupted (unless allowed) or newer-format file.
    public static func makePersistent(
        settings: SignInSettings = SignInSettings(), startingOverIfCorrupted: Bool = false
    ) throws -> ArcGISCredentialStore {
        try makePersistent(file: nil, settings: settings, startingOverIfCorrupted: startingOverIfCorrupted)
    }

    /// `makePersistent(settings:startingOverIfCorrupted:)` with the store in `file` (`nil`: chosen by
    /// `CredentialStoreFile.select(environment:)`).
    ///
    /// - Parameter owner: the app adding to a shared store (see ``owner``); nil where everything may be removed.
    package static func makePersistent(
        file: CredentialStoreFile?, settings: SignInSettings = SignInSettings(), startingOverIfCorrupted: Bool = false,
        owner: String? = nil
    ) throws -> ArcGISCredentialStore {
        let file = try file ?? CredentialStoreFile.select(environment: ProcessInfo.processInfo.environment)
        let snapshot = try readSnapshot(of: file, startingOverIfCorrupted: startingOverIfCorrupted)
        var credentials: [ArcGISCredential] = []
        var unreadable: [String] = []
        for key in snapshot.keys {
            if let entry = snapshot.entry(for: key), CredentialStoreEntry.isEntry(entry) {
                // A credential kept without a TokenKeeper (token, application, pregenerated token).
                if let credential = CredentialStoreEntry.credential(from: entry, settings: settings) {
                    credentials.append(credential)
                } else {
                    unreadable.append(key)
                }
                continue
            }
            guard let entry = snapshot.entry(for: key), let record = StoredCredential(json: .object(entry)) else {
                unreadable.append(key)
                continue
            }
            var persistence = TokenKeeper.Persistence(store: file, key: key)
            persistence.keyringMovePending = file.backend == .keyring && KeyringEntryFormat.isDeferred(entry)
            credentials.append(record.credential(persistence: persistence, settings: settings))
        }
        return ArcGISCredentialStore(
            file: file, credentials: credentials, unreadable: unreadable, settings: settings, owner: owner)
    }

    /// A persistent store, with the ArcGIS Maps SDK's labels.
    ///
    /// On Linux the tokens go to the desktop keyring when a Secret Service answers and is unlocked, else — a headless
    /// machine, no session bus, a locked keyring — to the store file, as the tool's automatic store does
    /// (`$PORTAL_AUTH_STORE` chooses: `auto`, `keyring`, `file` or a path; by default
    /// `$XDG_STATE_HOME/portal-auth/credentials.json`, the keyring's index), 0600 in a 0700 folder; ``storageLocation``
    /// says which, and why. An app that accepts the keyring only says so:
    /// ``makePersistent(access:synchronizesWithiCloud:requiringKeyring:)``. `access` has no other meaning there
    /// (see `KeychainAccess`), and `synchronizesWithiCloud` is ignored — nothing is synchronised anywhere; copy the
    /// file yourself if you want it elsewhere.
    ///
    /// The file and the keyring are read on the library's small pool of threads for blocking work (the Secret Service may take seconds to answer), not
    /// on the caller's thread.
    ///
    /// - Throws: a store error (a `CategorizedError`) for unsafe permissions, a corrupted or newer-format file; `CancellationError`
    ///   when the task is cancelled before the store is read.
    public static func makePersistent(access: KeychainAccess, synchronizesWithiCloud: Bool = false) async throws
        -> ArcGISCredentialStore
    {
        try await makePersistent(
            access: access, synchronizesWithiCloud: synchronizesWithiCloud, requiringKeyring: false)
    }

    /// ``makePersistent(access:synchronizesWithiCloud:)``, with the tokens in the desktop keyring only when
    /// `requiringKeyring` is true: where no usable keyring answers it then throws, and no token goes to the file.
    ///
    /// ```swift
    /// let store = try await ArcGISCredentialStore.makePersistent(access: .whenUnlocked, requiringKeyring: true)
    /// ```
    ///
    /// - Throws: as ``makePersistent(access:synchronizesWithiCloud:)``, and with `requiringKeyring` a keyring error (a `CategorizedError`)
    ///   when no usable keyring answers (`noLibrary`, `noSessionBus`, `noService`, `locked`, `timedOut`).
    public static func makePersistent(
        access: KeychainAccess, synchronizesWithiCloud: Bool = false, requiringKeyring: Bool
    ) async throws -> ArcGISCredentialStore {
        try await makePersistent(
            access: access, synchronizesWithiCloud: synchronizesWithiCloud, requiringKeyring: requiringKeyring,
            scope: .shared)
    }

    /// ``makePersistent(access:synchronizesWithiCloud:requiringKeyring:)`` in `scope`: the app's own store
    /// (``CredentialStoreScope/app(_:)``) or the one it shares with `portal-auth` (``CredentialStoreScope/shared``,
    /// the default of the other forms), where its `removeAll()` removes only what it added.
    ///
    /// ```swift
    /// let store = try await ArcGISCredentialStore.makePersistent(access: .whenUnlocked, scope: .app("com.example.viewer"))
    /// ```
    ///
    /// - Throws: as ``makePersistent(access:synchronizesWithiCloud:requiringKeyring:)``, and
    ///   ``CredentialStoreScope/InvalidIdentifier`` for an app identifier that cannot name a store.
    public static func makePersistent(
        access: KeychainAccess, synchronizesWithiCloud: Bool = false, requiringKeyring: Bool = false,
        scope: CredentialStoreScope
    ) async throws -> ArcGISCredentialStore {
        let environment = ProcessInfo.processInfo.environment
        return try await BlockingWork.run {
            try makePersistent(
                file: CredentialStoreFile.forPersistentStores(
                    scope: scope, requiringKeyring: requiringKeyring, environment: environment),
                owner: scope.owner)
        }
    }

    /// The file's contents; an empty snapshot for a corrupted file when starting over is allowed.
    private static func readSnapshot(of file: CredentialStoreFile, startingOverIfCorrupted: Bool) throws
        -> StoreSnapshot
    {
        do {
            return try file.read()
        } catch {
            guard startingOverIfCorrupted, error.kind == .corrupted else { throw error }
            return StoreSnapshot()
        }
    }

    // MARK: - Contents

    /// Every credential held.
    public var credentials: [ArcGISCredential] { held.withLock { $0 } }

    /// The first credential that can be used for `url`.
    public func credential(for url: URL) -> ArcGISCredential? {
        credentials.first { $0.canBeUsed(for: url) }
    }

    /// The OAuth user credential for a portal and client ID, if held.
    public func oauthUserCredential(portalURL: URL, clientID: String? = nil) -> OAuthUserCredential? {
        oauthUserCredentials(portalURL: portalURL, clientID: clientID).first
    }

    /// The IAP credential for a configuration: a sign-in to the same identity provider (authorize URL) and client
    /// ID, the one last signed in with the same file first, if held. An identical copy of the file elsewhere finds
    /// the same sign-in.
    public func iapCredential(for configuration: IAPConfiguration) -> IAPCredential? {
        let matching = credentials.compactMap(\.kind.iap).filter { $0.isSignIn(to: configuration) }
        let file = configuration.sourceFile?.resolvingSymlinksInPath().path
        return matching.first { file != nil && $0.keeper.current.configurationFile == file } ?? matching.first
    }

    /// The IAP credentials signed in with the configuration file at `file` (compared by real path), without
    /// reading the file: one per client ID that was used with it.
    public func iapCredentials(configurationFile file: URL) -> [IAPCredential] {
        iapCredentials(configurationFile: file.path)
    }

    /// What `status` shows of each stored credential: no token.
    package var summaries: [CredentialSummary] {
        credentials.compactMap { $0.kind.tokenKeeping.map { CredentialSummary($0.record) } }
    }

    // MARK: - Changes (the ArcGIS Maps SDK's shape)

    /// Adds a credential, replacing one for the same portal/IAP and client, at once; a persistent store then
    /// writes it to its file (in order with the other changes), and from then on the credential refreshes under
    /// the file's lock. A write that fails is logged and thrown by the next `waitForPersistence()`.
    public func add(_ credential: ArcGISCredential) {
        hold(credential)
        guard let file else { return }
        if let keeping = credential.kind.tokenKeeping {
            mark(keeping)
            persistence.runInBackground(logger: settings.logger, storePath: file.path) {
                try await Self.write(keeping, to: file)
            }
        } else if let stored = marked(CredentialStoreEntry.entry(for: credential)) {
            persistence.runInBackground(logger: settings.logger, storePath: file.path) {
                try await Self.write(stored, to: file)
            }
        }
    }

    /// Removes every credential at once; a persistent store then empties its file (a failure is logged and thrown
    /// by the next `waitForPersistence()`). In a store shared with the tool (``CredentialStoreScope/shared``), only
    /// the entries this app added leave the file: the others stay there, for the tool and the apps that added them.
    public func removeAll() {
        held.withLock { $0.removeAll() }
        guard let file else { return }
        let owner = owner
        persistence.runInBackground(logger: settings.logger, storePath: file.path) {
            try await file.update(onCorruption: .keepAsideAndStartEmpty) { snapshot in
                Self.removeRemovable(from: &snapshot, owner: owner)
                return snapshot.recovery
            }
        }
    }

    /// Removes from `snapshot` what `owner` may remove: every entry when nil, else those it added.
    private static func removeRemovable(from snapshot: inout StoreSnapshot, owner: String?) {
        guard let owner else { return snapshot.removeAll() }
        for key in snapshot.keys where Self.addedBy(snapshot.entry(for: key)) == owner { snapshot.remove(key) }
    }

    /// The app recorded as having added `entry` to a shared store.
    private static func addedBy(_ entry: JSONObject?) -> String? {
        entry?[StoredCredential.addedByMember]?.stringValue
    }

    /// Whether this store may remove `credential` from its file (and so sign it out: revoke its tokens, end its
    /// provider session): always, unless the store is shared and another app or the tool added it.
    package func mayRemove(_ credential: ArcGISCredential) -> Bool {
        guard let owner else { return true }
        if let keeping = credential.kind.tokenKeeping { return keeping.keeper.current.addedBy == owner }
        return true
    }

    /// Marks a sign-in as added by ``owner`` (kept with its record through refreshes).
    private func mark(_ keeping: any TokenKeepingCredential) {
        guard let owner else { return }
        var record = keeping.keeper.current
        guard record.addedBy != owner else { return }
        record.addedBy = owner
        keeping.keeper.replace(record)
    }

    /// A stored entry of a credential kept without a `TokenKeeper`, marked as added by ``owner``.
    private func marked(_ stored: (key: String, entry: JSONObject)?) -> (key: String, entry: JSONObject)? {
        guard var stored, let owner else { return stored }
        stored.entry[StoredCredential.addedByMember] = .string(owner)
        return stored
    }

    /// Waits until every change made so far has reached the file.
    ///
    /// - Returns: when a write found the file corrupted, where the unreadable copy was kept (since the last wait).
    /// - Throws: the first write failure since the last wait (a store error (a `CategorizedError`), `CancellationError`); the
    ///   credentials in memory are unaffected by it.
    @discardableResult
    public func waitForPersistence() async throws -> CorruptedStoreRecovery? {
        try await persistence.waitForAll()
    }

    // MARK: - Changes that wait for the file

    /// Adds a credential as `add(_:)` does, but writes it to the file first and throws when that fails (the
    /// credential is then not added).
    ///
    /// - Returns: when the file was corrupted, where the unreadable copy was kept.
    @discardableResult
    public func addAndPersist(_ credential: ArcGISCredential) async throws -> CorruptedStoreRecovery? {
        guard let file else {
            hold(credential)
            return nil
        }
        if let keeping = credential.kind.tokenKeeping {
            mark(keeping)
            return try await persistence.run {
                let recovery = try await Self.write(keeping, to: file)
                self.hold(credential)
                return recovery
            }
        }
        guard let stored = marked(CredentialStoreEntry.entry(for: credential)) else {
            hold(credential)
            return nil
        }
        return try await persistence.run {
            let recovery = try await Self.write(stored, to: file)
            self.hold(credential)
            return recovery
        }
    }

    /// Removes a credential (and its entry in the file; in a store shared with the tool, only an entry this app
    /// added: another's stays in the file).
    public func remove(_ credential: ArcGISCredential) async throws {
        let owner = owner
        if let file, let keeping = credential.kind.tokenKeeping {
            // The key the entry was read under too: an entry of an older store may be under an older key.
            let keys = [keeping.storeKey, keeping.keeper.persistence?.key].compactMap { $0 }
            try await persistence.run {
                try await file.update { snapshot in
                    for key in keys where owner == nil || Self.addedBy(snapshot.entry(for: key)) == owner {
                        snapshot.remove(key)
                    }
                }
            }
        } else if let file, let key = CredentialStoreEntry.entry(for: credential)?.key {
            _ = try await persistence.run {
                try await file.update { snapshot in
                    if owner == nil || Self.addedBy(snapshot.entry(for: key)) == owner { snapshot.remove(key) }
                }
            }
        }
        held.withLock { $0.removeAll { $0 === credential } }
    }

    /// Removes every credential and empties the file (in a store shared with the tool, of the entries this app
    /// added), throwing when the file cannot be written (the credentials are then kept).
    public func removeAllAndPersist() async throws {
        if let file {
            let owner = owner
            try await persistence.run {
                try await file.update(onCorruption: .keepAsideAndStartEmpty) {
                    Self.removeRemovable(from: &$0, owner: owner)
                }
            }
        }
        held.withLock { $0.removeAll() }
    }

    /// Empties the store in memory only, leaving the file as it is (after a failed `removeAllAndPersist()`).
    func removeAllInMemory() {
        held.withLock { $0.removeAll() }
    }

    // MARK: - Helpers

    /// Holds `credential` in memory, in place of one with the same store key.
    private func hold(_ credential: ArcGISCredential) {
        let newKey = Self.storeKey(of: credential)
        held.withLock { list in
            list.removeAll { existing in
                existing === credential || (newKey != nil && Self.storeKey(of: existing) == newKey)
            }
            list.append(credential)
        }
    }

    /// The key a credential is stored under (the same sign-in, user or token replaces it; `status` shows it).
    package static func storeKey(of credential: ArcGISCredential) -> String? {
        credential.kind.tokenKeeping?.storeKey ?? CredentialStoreEntry.entry(for: credential)?.key
    }

    /// Writes the entry of a credential kept without a `TokenKeeper`.
    private static func write(_ stored: (key: String, entry: JSONObject), to file: CredentialStoreFile) async throws
        -> CorruptedStoreRecovery?
    {
        try await file.update(onCorruption: .keepAsideAndStartEmpty) { snapshot in
            snapshot.set(stored.entry, for: stored.key)
            return snapshot.recovery
        }
    }

    /// Writes the credential's entry and attaches the credential to the file.
    private static func write(_ keeping: any TokenKeepingCredential, to file: CredentialStoreFile) async throws
        -> CorruptedStoreRecovery?
    {
        let key = keeping.storeKey
        guard case .object(let entry) = keeping.record.json else { return nil }
        let recovery = try await file.update(onCorruption: .keepAsideAndStartEmpty) { snapshot in
            snapshot.set(entry, for: key)
            // Entries of the same sign-in under an older form of its key (IAP entries once keyed by file path)
            // move to the new key: the old entry goes.
            for other in snapshot.keys where other != key {
                if let stored = snapshot.entry(for: other), StoredCredential(json: .object(stored))?.key == key {
                    snapshot.remove(other)
                }
            }
            return snapshot.recovery
        }
        keeping.keeper.attach(TokenKeeper.Persistence(store: file, key: key))
        return recovery
    }
}

extension ArcGISCredentialStore {
    /// Every OAuth user credential for a portal (every client ID when `clientID` is nil), in store order.
    public func oauthUserCredentials(portalURL: URL, clientID: String? = nil) -> [OAuthUserCredential] {
        // Compared as portal URLs are normalised (a sign-in stored as `…/arcgis/sharing/rest` is found by `…/arcgis`).
        let wanted = OAuthUserConfiguration.normalizedPortalURL(portalURL)
        return credentials.compactMap(\.kind.oAuthUser).filter {
            OAuthUserConfiguration.normalizedPortalURL($0.configuration.portalURL) == wanted
                && (clientID == nil || $0.configuration.clientID == clientID)
        }
    }

    /// Every IAP credential signed in with the configuration file at `path` (symbolic links resolved), whatever
    /// its client ID: found also when the file itself is gone or no longer loads.
    public func iapCredentials(configurationFile path: String) -> [IAPCredential] {
        let wanted = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        return credentials.compactMap(\.kind.iap).filter { $0.keeper.current.configurationFile == wanted }
    }

    /// Every IAP credential signed in to the identity provider and client of `configuration` (any user, any copy
    /// of its file).
    public func iapCredentials(for configuration: IAPConfiguration) -> [IAPCredential] {
        credentials.compactMap(\.kind.iap).filter { $0.isSignIn(to: configuration) }
    }
}

/// When the ArcGIS Maps SDK lets the keychain hand out stored credentials; accepted by the `makePersistent` and
/// `setupPersistentCredentialStorage` functions so that code written for the SDK compiles unchanged.
///
/// Linux has no keychain with these states. Whatever the value, a persistent `ArcGISCredentialStore` keeps its tokens
/// in the desktop keyring (the Secret Service, readable while the user's session has it unlocked) or, without one,
/// in the store file (mode 0600 in a 0700 folder of the user's XDG state directory): readable by the user's processes
/// whenever the user's files are, which is closest to `afterFirstUnlockThisDeviceOnly` — neither leaves the machine
/// by itself.
public enum KeychainAccess: Sendable, Hashable {
    /// After the first unlock since boot.
    case afterFirstUnlock
    /// After the first unlock since boot, on this device only.
    case afterFirstUnlockThisDeviceOnly
    /// While the device is unlocked.
    case whenUnlocked
    /// While the device is unlocked, on this device only.
    case whenUnlockedThisDeviceOnly
    /// While a passcode is set, on this device only.
    case whenPasscodeSetThisDeviceOnly
}
