import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthStore

/// A persistent `NetworkCredentialStore` against an in-memory Secret Service: answers land in the keyring, come
/// back in the next session, and removals remove them.
@Suite("Network credentials in the keyring")
struct NetworkCredentialKeyringTests {
    let space = ProtectionSpace(host: "gis.example.com", port: 443)

    @Test("a password added is an item, loaded by the next store; replacing and removing change the item")
    func passwordRoundTrip() async throws {
        let storage = InMemorySecretStorage()
        let first = try NetworkCredentialStore(keyring: NetworkCredentialKeyring(storage: storage))
        #expect(first.isPersistent)
        try await first.add(.password(username: "alice", password: "pw-secret-1"), for: space)
        #expect(storage.items.count == 1)
        #expect(
            storage.items.first?.attributes == [
                "kind": "password", "host": "gis.example.com", "port": "443", "username": "alice",
            ])
        #expect(storage.items.first?.secret == "pw-secret-1")

        let second = try NetworkCredentialStore(keyring: NetworkCredentialKeyring(storage: storage))
        let loaded = await second.transportCredentials(for: URL(string: "https://gis.example.com/portal")!)
        #expect(loaded.password?.username == "alice" && loaded.password?.password == "pw-secret-1")

        try await second.add(.password(username: "bob", password: "pw-secret-2"), for: space)
        #expect(storage.items.map(\.secret) == ["pw-secret-2"], "the earlier user's item is replaced")
        await second.remove(.password, for: space)
        #expect(storage.items.isEmpty)
    }

    @Test("removeAll empties the keyring's network items and leaves other items alone")
    func removeAll() async throws {
        let storage = InMemorySecretStorage()
        storage.plant(.init(schema: .credential, attributes: ["store": "/s", "entry": "k"], secret: "other"))
        let store = try NetworkCredentialStore(keyring: NetworkCredentialKeyring(storage: storage))
        try await store.add(.password(username: "alice", password: "pw"), for: space)
        try await store.add(
            .password(username: "alice", password: "pw"), for: ProtectionSpace(host: "b.example.com", port: 8443))
        await store.removeAll()
        #expect(storage.items.map(\.secret) == ["other"])
    }

    @Test("an item that cannot be used (a certificate file gone, an unknown kind) is skipped and kept")
    func unusableItemsSkipped() async throws {
        let storage = InMemorySecretStorage()
        storage.plant(
            .init(
                schema: .network,
                attributes: ["kind": "certificate", "host": "a", "port": "443", "file": "/nonexistent.p12"], secret: "p"
            ))
        storage.plant(
            .init(schema: .network, attributes: ["kind": "smartcard", "host": "a", "port": "443"], secret: "p"))
        let store = try NetworkCredentialStore(keyring: NetworkCredentialKeyring(storage: storage))
        #expect(await store.protectionSpaces.isEmpty)
        #expect(storage.items.count == 2)
    }

    @Test("a keyring that refuses the write keeps nothing in memory either and says why")
    func failedWrite() async throws {
        let storage = InMemorySecretStorage()
        let store = try NetworkCredentialStore(keyring: NetworkCredentialKeyring(storage: storage))
        storage.setFailingStores(true)
        await #expect(throws: KeyringError.self) {
            try await store.add(.password(username: "alice", password: "pw"), for: space)
        }
        #expect(await store.credentials(for: space).isEmpty)
    }
}
