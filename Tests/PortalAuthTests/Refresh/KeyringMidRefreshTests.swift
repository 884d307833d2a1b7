import Foundation
import Testing
@testable import PortalAuth
import PortalAuthTesting
@testable import PortalAuthStore

/// A refresh whose store keeps its secrets in the keyring, when the keyring goes away (a screen lock, a crashed or
/// stopped daemon) around a refresh with rotating refresh tokens (issue 25): nothing is sent when the keyring cannot
/// be written, and rotated tokens that arrive once it is gone are kept in the store file and moved back later.
/// The real gnome-keyring cases are in the integration tests (`KeyringMidRefreshTests` there).
@Suite("Token keeper: the keyring lost around a refresh")
struct KeyringMidRefreshTests {
    typealias Fixture = TokenKeeperTests

    /// A keyring store in a new folder holding `record` in an item.
    static func keyringStore(holding record: StoredCredential) async throws -> (
        TemporaryDirectory, InMemorySecretStorage, CredentialStoreFile
    ) {
        let temporary = try TemporaryDirectory()
        let storage = InMemorySecretStorage()
        var store = temporary.store()
        store.secretStorage = storage
        store.backend = .keyring
        guard case .object(let entry) = record.json else { throw CancellationError() }
        try await store.update { $0.set(entry, for: record.key) }
        return (temporary, storage, store)
    }

    @Test(
        "a keyring that is locked (or gone) when a refresh is due: nothing is sent, the error says so, the stored refresh token stays"
    )
    func probedBeforeSending() async throws {
        let record = Fixture.record(.iap, refresh: "secret-refresh-1")
        let (temporary, storage, store) = try await Self.keyringStore(holding: record)
        defer { withExtendedLifetime(temporary) {} }
        let before = try String(contentsOfFile: store.path, encoding: .utf8)
        // The item can still be read (the lock came after the store was read), but nothing could be written.
        storage.setProbeError(
            KeyringError(.locked, message: "the Secret Service's default collection (keyring) is locked"))
        let client = ScriptedHTTPClient([ScriptedHTTPClient.tokens("access-2", refresh: "secret-refresh-2")])
        let keeper = Fixture.persisted(record, in: store, client)

        let error = try await #require(throws: KeyringError.self) { try await keeper.validCredential() }
        #expect(client.count == 0, "the refresh token was spent although its successor could not be stored")
        #expect(error.kind == .locked)
        #expect(
            error.description.contains("nothing was sent") && error.description.contains("unlock the keyring"),
            "\(error)")
        #expect(try String(contentsOfFile: store.path, encoding: .utf8) == before)
        #expect(try Fixture.stored(record, in: store)?.refreshToken == "secret-refresh-1")
    }

    @Test(
        "the keyring lost while the request is out: the rotated tokens are kept in the store file, 0600, and move into the keyring at the next use"
    )
    func lostInFlight() async throws {
        let record = Fixture.record(.iap, refresh: "secret-refresh-1")
        let (temporary, storage, store) = try await Self.keyringStore(holding: record)
        defer { withExtendedLifetime(temporary) {} }
        let answer = ScriptedHTTPClient.tokens("secret-access-2", refresh: "secret-refresh-2")
        // The screen locks while the provider answers: every write to the keyring fails from now on.
        let client = ScriptedHTTPClient { _, _ in
            storage.setFailingStores(true)
            return try answer.get()
        }
        let keeper = Fixture.persisted(record, in: store, client)

        let fresh = try await keeper.validCredential()
        #expect(fresh.refreshToken == "secret-refresh-2")
        #expect(
            keeper.keyringFallback?.contains("store refused by the test") == true, "\(keeper.keyringFallback ?? "nil")")
        // Written where it survives this process: the store file, with why.
        let entry = try #require(try store.readFile().entries[record.key])
        #expect(entry["refresh_token"]?.stringValue == "secret-refresh-2")
        #expect(KeyringEntryFormat.isDeferred(entry))
        var info = stat()
        #expect(stat(store.path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(
            try Fixture.stored(record, in: store)?.refreshToken == "secret-refresh-2",
            "another process reads the rotated token")

        // The keyring is back: the next use (no refresh needed) moves the tokens into it and out of the file.
        storage.setFailingStores(false)
        var persistence = TokenKeeper.Persistence(store: store, key: record.key)
        persistence.keyringMovePending = true
        let next = Fixture.keeper(fresh, client, persistence: persistence)
        #expect(try await next.validCredential().accessToken == "secret-access-2")
        #expect(client.count == 1, "moving sends nothing")
        #expect(next.keyringFallback == nil)
        let text = try String(contentsOfFile: store.path, encoding: .utf8)
        #expect(!text.contains("secret-") && !text.contains(KeyringEntryFormat.deferredMember), "\(text)")
        let moved = try #require(try store.readFile().entries[record.key])
        #expect(KeyringEntryFormat.reference(in: moved) != nil)
        #expect(try Fixture.stored(record, in: store)?.refreshToken == "secret-refresh-2")
        #expect(storage.items.count == 1, "the item holding the spent refresh token is removed")
        #expect(storage.items.first?.secret.contains(KeyringEntryFormat.deferredMember) == false)
    }

    @Test("a keyring still unavailable at the next use: the token in the file is handed out, and stays there")
    func stillUnavailable() async throws {
        let record = Fixture.record(.iap, refresh: "secret-refresh-1")
        let (temporary, storage, store) = try await Self.keyringStore(holding: record)
        defer { withExtendedLifetime(temporary) {} }
        let answer = ScriptedHTTPClient.tokens("secret-access-2", refresh: "secret-refresh-2")
        let client = ScriptedHTTPClient { _, _ in
            storage.setFailingStores(true)
            return try answer.get()
        }
        let fresh = try await Fixture.persisted(record, in: store, client).validCredential()

        var persistence = TokenKeeper.Persistence(store: store, key: record.key)
        persistence.keyringMovePending = true
        let next = Fixture.keeper(fresh, client, persistence: persistence)
        #expect(try await next.validCredential().accessToken == "secret-access-2")
        #expect(next.keyringFallback != nil)
        #expect(try Fixture.stored(record, in: store)?.refreshToken == "secret-refresh-2")
        #expect(client.count == 1)
    }
}
