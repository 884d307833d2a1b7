import Foundation
import Glibc
import PortalAuthCore

/// The persistent credential store: one private JSON file of entries, shared safely by concurrent
/// processes.
///
/// - `read()` gives the entries as they are (for `status`, `token` without a refresh). It takes no lock:
///   writers replace the file atomically, so a reader sees a whole old or a whole new file.
/// - `update(onCorruption:isolation:_:)` and `withExclusiveAccess(onCorruption:reservingSpace:isolation:_:)` take the
///   store's exclusive lock, re-read the file under it, let the body change the snapshot, write it back
///   atomically when it changed, and release the lock: concurrent updates never lose an entry.
///
/// Files: the store (`0600`), its directory (created `0700`; locked too, so that a removed or replaced lock file
/// cannot let two writers in), the lock file `<store>.lock` (`0600`, never deleted), temporary files
/// `.<name>.tmp-*` while writing (and as reserved space during a refresh), and `<store>.corrupt-<UTC time>` for a corrupted
/// store moved aside. A store or directory that other users can access is refused with the `chmod` that fixes it.
package struct CredentialStoreFile: Sendable {
    // MARK: - Configuration

    /// Tuning of the lock.
    public struct Configuration: Sendable, Equatable {
        /// How long an update waits for another process to release the lock before failing.
        public var lockTimeout: Duration
        /// The longest pause between two attempts to take the lock (pauses start at 2 ms and double).
        public var maximumLockPollInterval: Duration

        /// Creates a configuration; the defaults suit a command-line tool.
        ///
        /// The default lock timeout (90 s) outlasts a holder's refresh against a slow identity provider (an answer is
        /// waited for up to 60 s, see `RefreshPolicy.attemptTimeout`), so that waiters get the new tokens rather
        /// than a lock timeout.
        public init(lockTimeout: Duration = .seconds(90), maximumLockPollInterval: Duration = .milliseconds(50)) {
            self.lockTimeout = lockTimeout
            self.maximumLockPollInterval = maximumLockPollInterval
        }
    }

    /// Where the store lives.
    public let location: StoreLocation
    /// Lock settings.
    public var configuration: Configuration
    /// Where changed entries keep their secrets: in this file (the default), or in the desktop keyring with this
    /// file as their index. Entries that name a keyring item are read from it whatever this says.
    public var backend: StoreBackend = .file
    /// Why ``backend`` was chosen, when it was chosen automatically (for `status`).
    public var backendReason: String?
    /// The keyring's items (libsecret; tests give another).
    var secretStorage: any SecretItemStorage = SecretServiceClient()

    /// A store at `location`; nothing is touched until it is read or updated.
    public init(location: StoreLocation, configuration: Configuration = Configuration()) {
        self.location = location
        self.configuration = configuration
    }

    /// The store file's path.
    public var path: String { location.path }

    // MARK: - Reading

    /// The entries as they are now; a missing store (or directory) is an empty snapshot.
    ///
    /// - Throws: `CredentialStoreError`: `unsafePermissions` when the file is not `0600`-private or not the
    ///   user's, or the directory is readable or writable by others; `notRegularFile`; `corrupted` (with the
    ///   parser's line and column in `syntaxError`) — never an empty snapshot for a file that is there;
    ///   `unsupportedVersion`; `fileSystem`.
    package func read() throws(CredentialStoreError) -> StoreSnapshot {
        // An entry whose keyring item a writer replaced between the file read and the item read is read again.
        var attempt = 0
        while true {
            let entries = try readFile().entries
            guard entries.values.contains(where: { KeyringEntryFormat.reference(in: $0) != nil }) else {
                return StoreSnapshot(entries: entries)
            }
            let (resolved, missing) = keyring.resolve(entries)
            attempt += 1
            if !missing || attempt == 3 { return StoreSnapshot(entries: resolved) }
        }
    }

    /// The keyring side of this store.
    package var keyring: KeyringEntrySecrets { KeyringEntrySecrets(storage: secretStorage, storePath: path) }

    /// The file's entries as written (keyring entries as references) and the place of the secrets it records.
    func readFile() throws(CredentialStoreError) -> (entries: [String: JSONObject], recorded: StoreBackend?) {
        guard try StoreFileSystem.checkDirectoryIfPresent(location.directory) else { return ([:], nil) }
        // O_NONBLOCK: opening a FIFO planted at the path must not hang; it is then refused as not a regular file.
        guard let descriptor = try StoreFileSystem.open(path, O_RDONLY | O_NONBLOCK) else { return ([:], nil) }
        defer { close(descriptor) }
        try StoreFileSystem.checkPrivateFile(StoreFileSystem.status(ofDescriptor: descriptor, path: path), path: path)
        let data = try StoreFileSystem.readAll(descriptor, path: path)
        return try StoreDocument.decodeRecording(data, path: path)
    }

    // MARK: - Updating

    /// Changes the store under its exclusive lock; the body is synchronous (no I/O of its own).
    ///
    /// See ``withExclusiveAccess(onCorruption:reservingSpace:isolation:_:)``, which this calls.
    package func update<Result>(
        onCorruption policy: CorruptedStorePolicy = .fail,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (inout StoreSnapshot) throws -> Result
    ) async throws -> Result {
        try await withExclusiveAccess(onCorruption: policy, isolation: isolation) { snapshot in
            try body(&snapshot)
        }
    }

    /// Runs `body` while holding the store's exclusive lock, on a snapshot re-read under the lock, and writes
    /// the snapshot back atomically if the body changed it.
    ///
    /// The body may suspend (a token refresh does network I/O here); other processes and tasks wait for the
    /// lock meanwhile, up to their lock timeout. If the body throws, nothing is written and the error is
    /// rethrown. The lock is released on every path; if the process dies, the kernel releases it.
    ///
    /// - Parameters:
    ///   - policy: what to do when the store is corrupted (see ``CorruptedStorePolicy``); with
    ///     `.keepAsideAndStartEmpty` the body gets an empty snapshot whose ``StoreSnapshot/recovery`` names the
    ///     kept copy.
    ///   - reservingSpace: before the body runs, set aside disk space for writing the store back (the current
    ///     document plus ``reservedHeadroom`` bytes) and fail with `fileSystem` when there is none, so that what
    ///     the body gets from elsewhere (a rotated refresh token) is not lost to a full disk afterwards.
    ///   - deferringKeyringFailure: when given, a changed entry the keyring cannot take when it is written (locked,
    ///     gone or hung since the body started) keeps its secrets in the store file (0600) instead of failing the
    ///     update, marked so that the next update while the keyring answers moves it there; this gets the keyring's
    ///     error. For what cannot be had again (a refresh's rotated tokens).
    ///   - body: reads and changes the snapshot; its result is returned.
    /// - Throws: `CredentialStoreError` (`lockTimeout`, `cancelled`, the errors of ``read()``, `fileSystem`
    ///   while reserving or writing), or what `body` throws.
    package func withExclusiveAccess<Result>(
        onCorruption policy: CorruptedStorePolicy = .fail,
        reservingSpace: Bool = false,
        deferringKeyringFailure: ((KeyringError) -> Void)? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (inout StoreSnapshot) async throws -> Result
    ) async throws -> Result {
        try await exclusiveAccess(
            onCorruption: policy, reservingSpace: reservingSpace, deferringKeyringFailure: deferringKeyringFailure, body
        )
    }

    /// Checks, before something that cannot be undone (a refresh request that spends a rotating refresh token),
    /// that what it brings can be stored: with the keyring as ``backend``, that a Secret Service answers and its
    /// default collection is unlocked. Nothing to check for the file (its space is reserved, see
    /// ``withExclusiveAccess(onCorruption:reservingSpace:deferringKeyringFailure:isolation:_:)``).
    ///
    /// The Secret Service's probe (up to 3 s) runs on `BlockingWork`'s pool, not on the caller's thread.
    ///
    /// - Throws: `KeyringError` saying that nothing was sent.
    package func checkSecretsWritable() async throws {
        guard backend == .keyring else { return }
        let storage = secretStorage
        try await BlockingWork.runIgnoringCancellation {
            do throws(KeyringError) {
                try storage.probe()
            } catch {
                throw KeyringError(
                    error.kind,
                    message:
                        "\(error.message) (checked before refreshing: nothing was sent, and the stored refresh token still works)"
                )
            }
        }
    }

    /// ``withExclusiveAccess(onCorruption:reservingSpace:isolation:_:)``, also writing the file when `recording`
    /// names a place of the secrets to record (a migration), which moves every readable entry's secrets there.
    ///
    /// With the keyring as ``backend``, changed entries are written as new keyring items before the file names
    /// them, and the items the file no longer names are removed after it is written (see ``KeyringReference``).
    ///
    /// The blocking calls (the file read and write, the space reservation, the Secret Service's operations, up to
    /// 15 s each) run on `BlockingWork`'s pool, in two steps around `body`, so that no thread of Swift's cooperative
    /// pool waits for them; the lock is polled without blocking (`FileLock`).
    func exclusiveAccess<Result>(
        onCorruption policy: CorruptedStorePolicy = .fail,
        reservingSpace: Bool = false,
        deferringKeyringFailure: ((KeyringError) -> Void)? = nil,
        recording: StoreBackend? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (inout StoreSnapshot) async throws -> Result
    ) async throws -> Result {
        let directory = location.directory
        try await BlockingWork.runIgnoringCancellation { try StoreFileSystem.ensurePrivateDirectory(directory) }
        let lock = try await FileLock.acquire(
            path: location.lockPath,
            timeout: configuration.lockTimeout,
            maximumPause: configuration.maximumLockPollInterval)
        defer { lock.release() }

        let toKeyring = backend == .keyring
        let before = try await BlockingWork.runIgnoringCancellation { [self] in
            let (read, recorded) = try readUnderLock(policy: policy)
            let (resolved, keyringState) = keyring.resolveUnderLock(read.entries, listing: toKeyring)
            var reservation: SpaceReservation?
            if reservingSpace {
                AtomicFileWriter.removeLeftovers(for: path)
                reservation = try SpaceReservation(
                    bytes: StoreDocument.encode(resolved).count + Self.reservedHeadroom, for: path)
            }
            return LockedRead(
                read: read, recorded: recorded, resolved: resolved, keyringState: keyringState, reservation: reservation
            )
        }
        var snapshot = StoreSnapshot(entries: before.resolved, recovery: before.read.recovery)
        let result = try await body(&snapshot)
        let after = snapshot
        let deferring = deferringKeyringFailure != nil
        // The keyring's error for deferred entries comes back with the outcome; the caller's handler runs here.
        let (deferred, failure) = try await BlockingWork.runIgnoringCancellation {
            [self] () -> (KeyringError?, (any Error)?) in
            var deferred: KeyringError?
            do {
                try write(
                    after, over: before, recording: recording, toKeyring: toKeyring,
                    deferring: deferring ? { deferred = $0 } : nil)
                return (deferred, nil)
            } catch {
                return (deferred, error)
            }
        }
        if let deferred { deferringKeyringFailure?(deferred) }
        if let failure { throw failure }
        return result
    }

    /// What ``exclusiveAccess(onCorruption:reservingSpace:deferringKeyringFailure:recording:isolation:_:)`` read under
    /// the lock before its body ran.
    private struct LockedRead: Sendable {
        let read: StoreSnapshot
        let recorded: StoreBackend?
        let resolved: [String: JSONObject]
        let keyringState: KeyringEntrySecrets.LockedState
        let reservation: SpaceReservation?
    }

    /// Writes `snapshot` back when it changed (or secrets are to move), in the reserved space when there is one, and
    /// removes the keyring items the file no longer names. Blocking: runs on `BlockingWork`'s pool.
    private func write(
        _ snapshot: StoreSnapshot, over before: LockedRead, recording: StoreBackend?, toKeyring: Bool,
        deferring: ((KeyringError) -> Void)?
    ) throws {
        var keyringState = before.keyringState
        let resolved = snapshot.entries
        let recordedNow = recording ?? before.recorded
        if snapshot.isChanged || recordedNow != before.recorded
            || keyring.needsRewrite(resolved, toKeyring: toKeyring, state: keyringState)
        {
            let fileEntries = try keyring.fileEntries(
                for: resolved, toKeyring: toKeyring, state: &keyringState, deferring: deferring)
            let data = StoreDocument.encode(fileEntries, recording: recordedNow)
            if let reservation = before.reservation {
                try reservation.commit(data)
            } else {
                AtomicFileWriter.removeLeftovers(for: path)
                try AtomicFileWriter.write(data, to: path)
            }
            keyring.removeLeftovers(fileEntries: fileEntries, state: keyringState)
        } else if keyring.hasLeftovers(fileEntries: before.read.entries, state: keyringState) {
            keyring.removeLeftovers(fileEntries: before.read.entries, state: keyringState)
        }
    }

    /// Bytes reserved beyond the current document's size: room for one entry to grow by far more than a refresh
    /// makes it (tokens of a few kilobytes).
    static let reservedHeadroom = 64 * 1024

    // MARK: - Corruption

    /// The file's entries (keyring entries as references), with a corrupted file moved aside when the policy says
    /// so. Call only under the lock.
    private func readUnderLock(policy: CorruptedStorePolicy) throws(CredentialStoreError) -> (
        StoreSnapshot, StoreBackend?
    ) {
        do {
            let (entries, recorded) = try readFile()
            return (StoreSnapshot(entries: entries), recorded)
        } catch  where error.kind == .corrupted && policy == .keepAsideAndStartEmpty {
            let kept = try moveAside()
            let recovery = CorruptedStoreRecovery(
                storePath: path, keptCopyPath: kept, reason: error.corruptionReason ?? "unreadable")
            return (StoreSnapshot(recovery: recovery), nil)
        }
    }

    /// Renames the store to `<store>.corrupt-<UTC time>` (a free name; `-2`, `-3`… appended if needed).
    private func moveAside() throws(CredentialStoreError) -> String {
        let base = "\(path).corrupt-\(Self.utcTimestamp())"
        var candidate = base
        var number = 1
        while try StoreFileSystem.status(of: candidate, followingLinks: false) != nil {
            number += 1
            candidate = "\(base)-\(number)"
        }
        try StoreFileSystem.rename(path, to: candidate)
        try StoreFileSystem.syncDirectory(location.directory)
        return candidate
    }

    /// The current time as `20261122T021300Z`.
    private static func utcTimestamp() -> String { UTCTimestamp.basic() }
}

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
        if backend == .keyring {
            let storage = secretStorage
            try await BlockingWork.runIgnoringCancellation { try Self.probe(storage, environment: environment) }
        }
        return try await target.exclusiveAccess(recording: backend) { snapshot in
            snapshot.keys.filter { key in snapshot.entry(for: key).map(KeyringEntryFormat.isUnresolved) ?? false }
        }
    }
}

/// Where the credential store keeps the secrets of its entries (refresh, access and ID tokens).
package enum StoreBackend: String, Sendable, Equatable, CaseIterable {
    /// In the store file itself (0600 in a 0700 folder).
    case file
    /// In the desktop keyring (the Secret Service: GNOME Keyring, KWallet, KeePassXC) through libsecret; the store
    /// file then holds an index without secrets (who, where, expiry, and which keyring item).
    case keyring
}
