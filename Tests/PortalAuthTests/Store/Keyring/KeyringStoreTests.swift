import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthCore
@testable import PortalAuthStore

/// The store with its secrets in the keyring, against an in-memory Secret Service: the file as an index, the
/// crash-safe order of writes, leftovers, corrupted items, migration, and the automatic choice.
@Suite("Credential store in the keyring")
struct KeyringStoreTests {
    static let key = "iap|/c.json|client"
    /// An environment that names a session bus (the in-memory keyring answers whatever it is).
    static let bus = ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"]

    static func entry(refresh: String, access: String = "access-1") -> JSONObject {
        [
            "kind": .string("iap"), "client_id": .string("client"), "access_token": .string(access),
            "refresh_token": .string(refresh), "id_token": .string("id-1"),
            "access_token_expires_at": .integer(1_800_000_000),
        ]
    }

    func keyringStore(_ temporary: TemporaryDirectory, _ storage: some SecretItemStorage) -> CredentialStoreFile {
        var store = temporary.store()
        store.secretStorage = storage
        store.backend = .keyring
        return store
    }

    func fileText(_ store: CredentialStoreFile) throws -> String {
        try String(contentsOfFile: store.path, encoding: .utf8)
    }

    /// A keyring store holding the test entry (refresh token `r1`), and the item the file names for it; the
    /// folder lives as long as the value.
    struct SignedIn {
        let temporary: TemporaryDirectory
        let storage: InMemorySecretStorage
        let store: CredentialStoreFile
        let named: KeyringReference
    }

    func signedIn() async throws -> SignedIn {
        let temporary = try TemporaryDirectory()
        let storage = InMemorySecretStorage()
        let store = keyringStore(temporary, storage)
        try await store.update { $0.set(Self.entry(refresh: "r1"), for: Self.key) }
        return SignedIn(temporary: temporary, storage: storage, store: store, named: try named(store))
    }

    /// The item the file names for the test entry.
    func named(_ store: CredentialStoreFile) throws -> KeyringReference {
        let entry = try #require(try store.readFile().entries[Self.key])
        return try #require(KeyringEntryFormat.reference(in: entry))
    }

    @Test("the file holds the index without a secret; the item holds the entry; read() gives the whole entry")
    func indexAndItem() async throws {
        let temporary = try TemporaryDirectory()
        let storage = InMemorySecretStorage()
        let store = keyringStore(temporary, storage)
        try await store.update { $0.set(Self.entry(refresh: "refresh-secret-1"), for: Self.key) }

        let text = try fileText(store)
        for secret in ["refresh-secret-1", "access-1", "id-1"] { #expect(!text.contains(secret)) }
        #expect(text.contains("\"keyring\""))
        #expect(storage.items.count == 1)
        #expect(storage.items.first?.attributes["entry"] == Self.key)
        #expect(storage.items.first?.attributes["store"] == store.path)
        #expect(try store.read().entry(for: Self.key) == Self.entry(refresh: "refresh-secret-1"))
    }

    @Test("a new write makes a new item before the file names it and removes the old one after")
    func rotation() async throws {
        let fixture = try await signedIn()
        defer { withExtendedLifetime(fixture) {} }
        let storage = fixture.storage
        let store = fixture.store
        let first = fixture.named
        try await store.update { $0.set(Self.entry(refresh: "r2"), for: Self.key) }
        let second = try named(store)
        #expect(second.sequence == first.sequence + 1)
        #expect(second.generation != first.generation)
        #expect(storage.items.map(\.attributes["generation"]) == [second.generation])
        #expect(try store.read().entry(for: Self.key)?["refresh_token"]?.stringValue == "r2")
    }

    @Test(
        "an item a killed writer stored but never named in the file is taken over: its rotated refresh token is not lost"
    )
    func killedWriterItemAdopted() async throws {
        let fixture = try await signedIn()
        defer { withExtendedLifetime(fixture) {} }
        let storage = fixture.storage
        let store = fixture.store
        let named = fixture.named
        // The killed writer's newer item (sequence + 1), never named by the file.
        let newer = KeyringReference(generation: "killed", sequence: named.sequence + 1)
        storage.plant(
            .init(
                schema: .credential,
                attributes: KeyringEntryFormat.itemAttributes(storePath: store.path, key: Self.key, reference: newer),
                secret: KeyringEntryFormat.itemSecret(of: Self.entry(refresh: "r2-rotated"))))

        let seen = try await store.update { $0.entry(for: Self.key)?["refresh_token"]?.stringValue }
        #expect(seen == "r2-rotated")
        #expect(try self.named(store) == newer)
        #expect(storage.items.map(\.attributes["generation"]) == ["killed"], "the older item is removed")
    }

    @Test("a write whose item cannot be stored changes nothing: the file still names the old item")
    func failedItemWrite() async throws {
        let fixture = try await signedIn()
        defer { withExtendedLifetime(fixture) {} }
        let storage = fixture.storage
        let store = fixture.store
        let before = try fileText(store)
        storage.setFailingStores(true)
        await #expect(throws: KeyringError.self) {
            _ = try await store.update { $0.set(Self.entry(refresh: "r2"), for: Self.key) }
        }
        #expect(try fileText(store) == before)
        #expect(try store.read().entry(for: Self.key)?["refresh_token"]?.stringValue == "r1")
    }

    @Test("removing an entry removes its item; items of removed entries left by a kill are removed by the next writer")
    func removal() async throws {
        let fixture = try await signedIn()
        defer { withExtendedLifetime(fixture) {} }
        let storage = fixture.storage
        let store = fixture.store
        storage.plant(
            .init(
                schema: .credential,
                attributes: KeyringEntryFormat.itemAttributes(
                    storePath: store.path, key: "gone", reference: .init(generation: "g", sequence: 3)),
                secret: KeyringEntryFormat.itemSecret(of: Self.entry(refresh: "old"))))
        _ = try await store.update { $0.remove(Self.key) }
        #expect(storage.items.isEmpty)
        #expect(try store.read().isEmpty)
    }

    @Test("a corrupted or foreign item is reported through its entry and left in the keyring, even after a new sign-in")
    func corruptedItemKept() async throws {
        let fixture = try await signedIn()
        defer { withExtendedLifetime(fixture) {} }
        let storage = fixture.storage
        let store = fixture.store
        let named = fixture.named
        let attributes = KeyringEntryFormat.itemAttributes(storePath: store.path, key: Self.key, reference: named)
        _ = try storage.clear(attributes: attributes, schema: .credential)
        storage.plant(.init(schema: .credential, attributes: attributes, secret: "not json \u{1B}[31m"))
        // A foreign item without a generation, for the same entry.
        storage.plant(
            .init(schema: .credential, attributes: ["store": store.path, "entry": Self.key], secret: "foreign"))

        let read = try store.read().entry(for: Self.key)
        #expect(read?["access_token"] == nil)
        #expect(read?[KeyringEntryFormat.problemMember]?.stringValue?.contains("corrupted") == true)
        #expect(StoredCredential(json: .object(read ?? [:])) == nil, "reported as an unreadable entry")

        try await store.update { $0.set(Self.entry(refresh: "r-new"), for: Self.key) }
        #expect(try store.read().entry(for: Self.key)?["refresh_token"]?.stringValue == "r-new")
        #expect(storage.items.contains { $0.secret == "not json \u{1B}[31m" }, "the corrupted item is kept")
        #expect(storage.items.contains { $0.secret == "foreign" }, "the foreign item is kept")
    }

    @Test(
        "an old store file (tokens inline) loads with the keyring chosen, and its tokens move into the keyring at the next write"
    )
    func oldFileMovesIn() async throws {
        let temporary = try TemporaryDirectory()
        let storage = InMemorySecretStorage()
        var plain = temporary.store()
        plain.secretStorage = storage
        try await plain.update { $0.set(Self.entry(refresh: "r1"), for: Self.key) }
        #expect(try fileText(plain).contains("r1"))
        let store = keyringStore(temporary, storage)
        #expect(try store.read().entry(for: Self.key) == Self.entry(refresh: "r1"))
        #expect(storage.calls == 0, "a file without keyring entries is read without the keyring")
        try await store.update { _ in }
        #expect(!(try fileText(store).contains("r1")))
        #expect(try store.read().entry(for: Self.key) == Self.entry(refresh: "r1"))
    }

    @Test("migrate to file and back keeps the sign-in, records the choice, and removes the items it leaves")
    func migration() async throws {
        let fixture = try await signedIn()
        defer { withExtendedLifetime(fixture) {} }
        let storage = fixture.storage
        let store = fixture.store
        try await store.update { $0.set(Self.entry(refresh: "r2"), for: "other") }

        #expect(try await store.migrate(to: .file, environment: Self.bus).isEmpty)
        let inFile = try fileText(store)
        #expect(inFile.contains("r1") && inFile.contains("\"secrets\": \"file\""))
        #expect(storage.items.isEmpty)
        #expect(try store.read().entry(for: Self.key) == Self.entry(refresh: "r1"))

        #expect(try await store.migrate(to: .keyring, environment: Self.bus).isEmpty)
        let migrated = try fileText(store)
        #expect(!migrated.contains("r1") && migrated.contains("\"secrets\": \"keyring\""))
        #expect(storage.items.count == 2)
        #expect(try store.read().entry(for: "other") == Self.entry(refresh: "r2"))
    }

    @Test("an entry whose keyring is unreachable stays as it was when the file backend writes others")
    func unreachableEntryKept() async throws {
        let fixture = try await signedIn()
        defer { withExtendedLifetime(fixture) {} }
        let temporary = fixture.temporary
        let store = fixture.store
        let before = try store.readFile().entries[Self.key]
        var headless = temporary.store()
        headless.secretStorage = UnreachableStorage()
        try await headless.update { $0.set(Self.entry(refresh: "file-only"), for: "other") }
        #expect(try headless.readFile().entries[Self.key] == before)
        #expect(try headless.read().entry(for: Self.key)?[KeyringEntryFormat.problemMember] != nil)
        #expect(try headless.read().entry(for: "other") == Self.entry(refresh: "file-only"))
        #expect(try store.read().entry(for: Self.key) == Self.entry(refresh: "r1"))
    }

    // MARK: - Choosing

    @Test(
        "--store words and paths",
        arguments: [
            (nil, CredentialStoreFile.Choice.automatic), ("", .automatic), ("auto", .automatic), ("keyring", .keyring),
            ("file", .file), ("./keyring", .path("./keyring")), ("/tmp/s.json", .path("/tmp/s.json")),
        ] as [(String?, CredentialStoreFile.Choice)])
    func choiceWords(text: String?, choice: CredentialStoreFile.Choice) {
        #expect(CredentialStoreFile.Choice(text) == choice)
    }

    @Test("auto uses the keyring when it answers, else the file with the reason; a forced keyring fails at once")
    func automaticChoice() throws {
        let temporary = try TemporaryDirectory()
        let storage = InMemorySecretStorage()
        let environment = ["XDG_STATE_HOME": temporary.path, "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"]
        let chosen = try CredentialStoreFile.select(
            store: nil, environment: environment, currentDirectory: nil, storage: storage)
        #expect(chosen.backend == .keyring)
        #expect(chosen.location.source == .xdgStateHome && chosen.path.hasSuffix("/portal-auth/credentials.json"))

        storage.setProbeError(KeyringError(.locked, message: "the default collection is locked"))
        let fallback = try CredentialStoreFile.select(
            store: nil, environment: environment, currentDirectory: nil, storage: storage)
        #expect(fallback.backend == .file)
        #expect(fallback.backendReason?.contains("locked") == true)
        #expect(throws: KeyringError(.locked, message: "the default collection is locked")) {
            try CredentialStoreFile.select(
                store: "keyring", environment: environment, currentDirectory: nil, storage: storage)
        }
        let path = try CredentialStoreFile.select(
            store: nil, environment: environment.merging(["PORTAL_AUTH_STORE": "/tmp/x.json"]) { $1 },
            currentDirectory: nil, storage: storage)
        #expect(path.backend == .file && path.path == "/tmp/x.json")
    }

    @Test("without a session bus address the keyring is not asked at all")
    func noBusNoCall() throws {
        let temporary = try TemporaryDirectory()
        let storage = InMemorySecretStorage()
        let chosen = try CredentialStoreFile.select(
            store: nil, environment: ["XDG_STATE_HOME": temporary.path], currentDirectory: nil, storage: storage)
        #expect(chosen.backend == .file)
        #expect(storage.calls == 0)
        #expect(throws: KeyringError.self) {
            try CredentialStoreFile.select(
                store: "keyring", environment: ["XDG_STATE_HOME": temporary.path], currentDirectory: nil,
                storage: storage)
        }
    }

    @Test("the automatic choice does not wait on a FIFO planted at the store path", .timeLimit(.minutes(1)))
    func automaticChoiceAndFIFO() async throws {
        let temporary = try TemporaryDirectory()
        let directory = "\(temporary.path)/portal-auth"
        #expect(mkdir(directory, 0o700) == 0)
        #expect(mkfifo("\(directory)/credentials.json", 0o600) == 0)
        let storage = InMemorySecretStorage()
        let state = temporary.path
        // On a thread of its own, so that a choice waiting for a writer would fail by the time limit, not block the pool.
        let backend = try await BlockingWork.run {
            try CredentialStoreFile.select(
                store: nil, environment: ["XDG_STATE_HOME": state], currentDirectory: nil, storage: storage
            ).backend
        }
        #expect(backend == .file)
    }

    @Test(
        "a lookup function (portal-auth token's getenv) chooses exactly what the same variables in a dictionary choose",
        arguments: [nil, "auto", "file", "keyring", "./keyring"] as [String?])
    func lookupChoosesAsDictionary(store: String?) throws {
        let temporary = try TemporaryDirectory()
        let environments: [[String: String]] = [
            ["XDG_STATE_HOME": temporary.path],
            ["XDG_STATE_HOME": temporary.path, "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"],
            [
                "HOME": temporary.path, "PORTAL_AUTH_STORE": "file",
                "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent",
            ],
            ["HOME": temporary.path, "PORTAL_AUTH_STORE": "keyring", "XDG_RUNTIME_DIR": temporary.path],
            ["XDG_STATE_HOME": "relative", "HOME": temporary.path, "PORTAL_AUTH_STORE": ""],
            ["PORTAL_AUTH_STORE": temporary.path + "/chosen.json"],
            [:],
        ]
        for environment in environments {
            let fromDictionary = InMemorySecretStorage()
            let fromLookup = InMemorySecretStorage()
            let expected = Result {
                try CredentialStoreFile.select(
                    store: store, environment: environment, currentDirectory: "/", storage: fromDictionary)
            }
            let chosen = Result {
                try CredentialStoreFile.select(
                    store: store, lookup: { environment[$0] }, currentDirectory: "/", storage: fromLookup)
            }
            #expect(Self.outcome(chosen) == Self.outcome(expected), "\(environment)")
            #expect(fromLookup.calls == fromDictionary.calls, "\(environment)")
        }
        // The process's own environment through getenv, as `portal-auth token` reads it, against Foundation's copy.
        let process = Result {
            try CredentialStoreFile.select(
                store: store, lookup: ProcessEnvironment.value(of:), currentDirectory: "/",
                storage: InMemorySecretStorage())
        }
        let copied = Result {
            try CredentialStoreFile.select(
                store: store, environment: ProcessInfo.processInfo.environment, currentDirectory: "/",
                storage: InMemorySecretStorage())
        }
        #expect(Self.outcome(process) == Self.outcome(copied))
    }

    /// What a store choice came to, comparable: the path, rule, backend and reason, or the error's text.
    private static func outcome(_ result: Result<CredentialStoreFile, any Error>) -> [String?] {
        switch result {
        case .success(let file): return [file.path, "\(file.location.source)", "\(file.backend)", file.backendReason]
        case .failure(let error): return ["error", "\(error)"]
        }
    }

    // MARK: - Pure parts

    @Test("candidates: newer unnamed items first, then the named one; older ones are leftovers")
    func candidates() {
        let named = KeyringReference(generation: "b", sequence: 2)
        let items = [
            KeyringReference(generation: "a", sequence: 1), named, KeyringReference(generation: "c", sequence: 3),
        ]
        #expect(KeyringEntryFormat.candidates(among: items, for: named).map(\.generation) == ["c", "b"])
        #expect(KeyringEntryFormat.nextSequence(items: items, current: named) == 4)
        #expect(KeyringEntryFormat.nextSequence(items: [], current: nil) == 1)
    }

    @Test("search results are parsed from libsecret's NUL-separated runs")
    func parseItems() {
        let bytes: [UInt8] = Array("a\u{0}1\u{0}b\u{0}2\u{0}\u{0}c\u{0}3\u{0}\u{0}".utf8)
        let items = bytes.withUnsafeBufferPointer { SecretServiceClient.parseItems($0) }
        #expect(items == [["a": "1", "b": "2"], ["c": "3"]])
    }
}

/// A keyring that cannot be reached (a headless machine).
struct UnreachableStorage: SecretItemStorage {
    func probe() throws(KeyringError) { throw KeyringError(.noSessionBus, message: "no bus") }
    func store(_ secret: String, attributes: [String: String], label: String, schema: SecretSchemaName)
        throws(KeyringError)
    { try probe() }
    func lookup(attributes: [String: String], schema: SecretSchemaName) throws(KeyringError) -> String? {
        try probe(); return nil
    }
    func clear(attributes: [String: String], schema: SecretSchemaName) throws(KeyringError) -> Bool {
        try probe(); return false
    }
    func search(attributes: [String: String], schema: SecretSchemaName) throws(KeyringError) -> [[String: String]] {
        try probe(); return []
    }
}
