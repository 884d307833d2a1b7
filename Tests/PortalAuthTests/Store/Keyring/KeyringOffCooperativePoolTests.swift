import Foundation
import Synchronization
import Testing
@testable import PortalAuth
@testable import PortalAuthCore
@testable import PortalAuthStore
@testable import PortalAuthTransport

/// The Secret Service's calls (up to 15 s each) and the store file's reads and writes run on `BlockingWork`'s pool,
/// never on the thread of the task that asked (one of Swift's cooperative threads): issue 30, item 5.
@Suite("Keyring and store calls off the cooperative pool")
struct KeyringOffCooperativePoolTests {
    /// The name of `BlockingWork`'s pool threads.
    static let poolThread = "PortalAuth.pool"

    /// A keyring that records the name of the thread each call ran on, in front of an in-memory one.
    final class ThreadRecordingStorage: SecretItemStorage {
        let storage = InMemorySecretStorage()
        private let threads = Mutex<[String]>([])

        /// The thread names of the calls so far, in order ("" for a thread without a name).
        var calls: [String] { threads.withLock { $0 } }

        private func record() { threads.withLock { $0.append(Thread.current.name ?? "") } }

        func probe() throws(KeyringError) {
            record()
            try storage.probe()
        }
        func store(_ secret: String, attributes: [String: String], label: String, schema: SecretSchemaName)
            throws(KeyringError)
        {
            record()
            try storage.store(secret, attributes: attributes, label: label, schema: schema)
        }
        func lookup(attributes: [String: String], schema: SecretSchemaName) throws(KeyringError) -> String? {
            record()
            return try storage.lookup(attributes: attributes, schema: schema)
        }
        func clear(attributes: [String: String], schema: SecretSchemaName) throws(KeyringError) -> Bool {
            record()
            return try storage.clear(attributes: attributes, schema: schema)
        }
        func search(attributes: [String: String], schema: SecretSchemaName) throws(KeyringError) -> [[String: String]] {
            record()
            return try storage.search(attributes: attributes, schema: schema)
        }
    }

    /// A store with the keyring as its backend (see `KeyringStoreTests`).
    func keyringStore(_ temporary: TemporaryDirectory, _ storage: ThreadRecordingStorage) -> CredentialStoreFile {
        KeyringStoreTests().keyringStore(temporary, storage)
    }

    @Test("an update's keyring calls before and after its body run on the pool, the body on the caller's side")
    func updateOnPool() async throws {
        let temporary = try TemporaryDirectory()
        let storage = ThreadRecordingStorage()
        let store = keyringStore(temporary, storage)
        try await store.update { $0.set(KeyringStoreTests.entry(refresh: "r1"), for: KeyringStoreTests.key) }
        let written = storage.calls
        #expect(written.count >= 2, "the update listed the items and stored one")
        // A second update reads the item back under the lock, stores the new one and removes the old one.
        let bodyThread = Mutex<String?>(nil)
        try await store.withExclusiveAccess(reservingSpace: true) { snapshot in
            bodyThread.withLock { $0 = Thread.current.name ?? "" }
            snapshot.set(KeyringStoreTests.entry(refresh: "r2"), for: KeyringStoreTests.key)
        }
        let all = storage.calls
        #expect(all.count > written.count + 2, "read, store and removal reached the keyring")
        #expect(all.allSatisfy { $0 == Self.poolThread }, "keyring calls ran on \(Set(all))")
        #expect(bodyThread.withLock { $0 } != Self.poolThread, "the body is not run on the pool")
        #expect(try store.read().entry(for: KeyringStoreTests.key) == KeyringStoreTests.entry(refresh: "r2"))
    }

    @Test(
        "the probe before a refresh (checkSecretsWritable) runs on the pool, and its refusal still says nothing was sent"
    )
    func probeOnPool() async throws {
        let temporary = try TemporaryDirectory()
        let storage = ThreadRecordingStorage()
        let store = keyringStore(temporary, storage)
        try await store.checkSecretsWritable()
        #expect(storage.calls == [Self.poolThread])

        storage.storage.setProbeError(KeyringError(.locked, message: "the keyring is locked"))
        let error = await #expect(throws: KeyringError.self) { try await store.checkSecretsWritable() }
        #expect(error?.kind == .locked)
        #expect(error?.message.contains("nothing was sent") == true)
        #expect(storage.calls == [Self.poolThread, Self.poolThread])
    }

    @Test("a migration into the keyring probes it and moves the entries on the pool")
    func migrationOnPool() async throws {
        let temporary = try TemporaryDirectory()
        let storage = ThreadRecordingStorage()
        var store = keyringStore(temporary, storage)
        store.backend = .file
        try await store.update { $0.set(KeyringStoreTests.entry(refresh: "r1"), for: KeyringStoreTests.key) }
        #expect(try await store.migrate(to: .keyring, environment: KeyringStoreTests.bus) == [])
        let calls = storage.calls
        #expect(calls.count >= 2, "the probe and the item's write reached the keyring")
        #expect(calls.allSatisfy { $0 == Self.poolThread }, "keyring calls ran on \(Set(calls))")
        #expect(storage.storage.items.count == 1)
    }

    @Test("the newest record a sign-out uses (latestRecord) is read from the store and its keyring on the pool")
    func latestRecordOnPool() async throws {
        let temporary = try TemporaryDirectory()
        let storage = ThreadRecordingStorage()
        let store = keyringStore(temporary, storage)
        let loaded = SignOutFakes.record(
            .oauthUser, refreshToken: "REFRESH-1", updatedAt: Date(timeIntervalSince1970: 1_800_000_000))
        let key = loaded.key
        let credential = OAuthUserCredential(
            record: loaded, persistence: TokenKeeper.Persistence(store: store, key: key), settings: SignInSettings())
        // Another process rotated the refresh token since this one loaded the credential.
        let rotated = SignOutFakes.record(
            .oauthUser, refreshToken: "REFRESH-2", updatedAt: Date(timeIntervalSince1970: 1_800_000_100))
        guard case .object(let entry) = rotated.json else { Issue.record("a record is a JSON object"); return }
        try await store.update { $0.set(entry, for: key) }
        let before = storage.calls.count

        let latest = await credential.latestRecord()
        #expect(latest.refreshToken == "REFRESH-2")
        let calls = storage.calls.dropFirst(before)
        #expect(!calls.isEmpty, "the item was read from the keyring")
        #expect(calls.allSatisfy { $0 == Self.poolThread }, "keyring calls ran on \(Set(calls))")
    }

    @Test("a persistent network credential store probes and loads the keyring on the pool")
    func networkStoreLoadsOnPool() async throws {
        let storage = ThreadRecordingStorage()
        _ = try await NetworkCredentialStore.load(from: storage, environment: KeyringStoreTests.bus)
        let calls = storage.calls
        #expect(calls.count >= 2, "the probe and the search reached the keyring")
        #expect(calls.allSatisfy { $0 == Self.poolThread }, "keyring calls ran on \(Set(calls))")
    }
}
