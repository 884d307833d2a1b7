public import Foundation
import Synchronization

/// The ArcGIS credentials an app or the tool holds, in memory or persisted in the credential store
/// file (one file per user, 0600, written atomically under a lock).
///
/// ```swift
/// let store = try ArcGISCredentialStore.makePersistent()
/// if let credential = store.credential(for: URL(string: "https://www.arcgis.com/sharing/rest/portals/self")!) { … }
/// ```
public final class ArcGISCredentialStore: Sendable {
    private let held: Mutex<[any ArcGISCredential]>
    /// The file behind a persistent store; `nil` for an in-memory one.
    public let file: CredentialStoreFile?
    /// Store keys of entries that could not be read back (shown by `status`; never their content).
    public let unreadableEntries: [String]
    private let settings: SignInSettings

    /// An empty in-memory store.
    public init() {
        self.held = Mutex([])
        self.file = nil
        self.unreadableEntries = []
        self.settings = SignInSettings()
    }

    private init(file: CredentialStoreFile, credentials: [any ArcGISCredential], unreadable: [String], settings: SignInSettings) {
        self.held = Mutex(credentials)
        self.file = file
        self.unreadableEntries = unreadable
        self.settings = settings
    }

    /// A store persisted in `file`, loaded now.
    ///
    /// - Parameters:
    ///   - file: the credential store file; by default `$PORTAL_AUTH_STORE`, else the XDG state directory.
    ///   - settings: the HTTP client and refresh policy the loaded credentials use.
    ///   - startingOverIfCorrupted: when the file is corrupted, start with no credentials instead of
    ///     failing; the next `add` keeps the corrupted file aside (renamed, never overwritten) and says where.
    /// - Throws: `CredentialStoreError` for unsafe permissions, a corrupted (unless allowed) or newer-format file.
    public static func makePersistent(
        file: CredentialStoreFile? = nil, settings: SignInSettings = SignInSettings(), startingOverIfCorrupted: Bool = false
    ) throws -> ArcGISCredentialStore {
        let file = try file ?? CredentialStoreFile(location: StoreLocation.resolve(environment: ProcessInfo.processInfo.environment))
        let snapshot = try readSnapshot(of: file, startingOverIfCorrupted: startingOverIfCorrupted)
        var credentials: [any ArcGISCredential] = []
        var unreadable: [String] = []
        for key in snapshot.keys {
            guard let entry = snapshot.entry(for: key), let record = StoredCredential(json: .object(entry)) else {
                unreadable.append(key)
                continue
            }
            let persistence = TokenKeeper.Persistence(store: file, key: key)
            switch record.kind {
            case .oauthUser: credentials.append(OAuthUserCredential(record: record, persistence: persistence, settings: settings))
            case .iap: credentials.append(IAPCredential(record: record, persistence: persistence, settings: settings))
            }
        }
        return ArcGISCredentialStore(file: file, credentials: credentials, unreadable: unreadable, settings: settings)
    }

    /// The file's contents; an empty snapshot for a corrupted file when starting over is allowed.
    private static func readSnapshot(of file: CredentialStoreFile, startingOverIfCorrupted: Bool) throws -> StoreSnapshot {
        do {
            return try file.read()
        } catch {
            guard startingOverIfCorrupted, error.kind == .corrupted else { throw error }
            return StoreSnapshot()
        }
    }

    // MARK: - Contents

    /// Every credential held.
    public var credentials: [any ArcGISCredential] { held.withLock { $0 } }

    /// The first credential that can be used for `url`.
    public func credential(for url: URL) -> (any ArcGISCredential)? {
        credentials.first { $0.canBeUsed(for: url) }
    }

    /// The OAuth user credential for a portal and client ID, if held.
    public func oauthUserCredential(portalURL: URL, clientID: String? = nil) -> OAuthUserCredential? {
        let wanted = StoredCredential.normalized(portalURL)
        return credentials.lazy.compactMap { $0 as? OAuthUserCredential }.first {
            StoredCredential.normalized($0.configuration.portalURL) == wanted && (clientID == nil || $0.configuration.clientID == clientID)
        }
    }

    /// The IAP credential for a configuration (same file, or same authorize URL, and client ID), if held.
    public func iapCredential(for configuration: IAPConfiguration) -> IAPCredential? {
        let key = StoredCredential.iapKey(
            configurationFile: configuration.sourceFile.map { $0.resolvingSymlinksInPath().path },
            authorizeURL: configuration.authorizeURL, clientID: configuration.clientID)
        return credentials.lazy.compactMap { $0 as? IAPCredential }.first { $0.storeKey == key }
    }

    /// The IAP credentials signed in with the configuration file at `file` (compared by real path), without
    /// reading the file: one per client ID that was used with it.
    public func iapCredentials(configurationFile file: URL) -> [IAPCredential] {
        let path = file.resolvingSymlinksInPath().path
        return credentials.compactMap { $0 as? IAPCredential }.filter { $0.keeper.current.configurationFile == path }
    }

    /// What `status` shows of each stored credential: no token.
    public var summaries: [CredentialSummary] {
        credentials.compactMap { ($0 as? any TokenKeepingCredential).map { CredentialSummary($0.record) } }
    }

    // MARK: - Changes

    /// Adds a credential, replacing one for the same portal/IAP and client; a persistent store writes it
    /// to its file at once and the credential refreshes under the file's lock from then on.
    ///
    /// - Returns: when the file was corrupted, where the unreadable copy was kept.
    @discardableResult
    public func add(_ credential: any ArcGISCredential) async throws -> CorruptedStoreRecovery? {
        var recovery: CorruptedStoreRecovery?
        if let file, let keeping = credential as? any TokenKeepingCredential {
            let key = keeping.storeKey
            guard case .object(let entry) = keeping.record.json else { return nil }
            recovery = try await file.update(onCorruption: .keepAsideAndStartEmpty) { snapshot in
                snapshot.set(entry, for: key)
                return snapshot.recovery
            }
            keeping.keeper.attach(TokenKeeper.Persistence(store: file, key: key))
        }
        let newKey = (credential as? any TokenKeepingCredential)?.storeKey
        held.withLock { list in
            list.removeAll { existing in
                existing === credential || (newKey != nil && (existing as? any TokenKeepingCredential)?.storeKey == newKey)
            }
            list.append(credential)
        }
        return recovery
    }

    /// Removes a credential (and its entry in the file).
    public func remove(_ credential: any ArcGISCredential) async throws {
        if let file, let keeping = credential as? any TokenKeepingCredential {
            let key = keeping.storeKey
            try await file.update { snapshot in _ = snapshot.remove(key) }
        }
        held.withLock { $0.removeAll { $0 === credential } }
    }

    /// Removes every credential (and empties the file).
    public func removeAll() async throws {
        if let file {
            try await file.update(onCorruption: .keepAsideAndStartEmpty) { $0.removeAll() }
        }
        held.withLock { $0.removeAll() }
    }
}
