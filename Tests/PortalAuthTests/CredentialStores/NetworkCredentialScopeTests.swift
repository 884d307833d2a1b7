import Foundation
import Logging
import Testing
@testable import PortalAuth
@testable import PortalAuthStore
import PortalAuthTesting

/// Network credentials follow the app's `CredentialStoreScope` as its tokens do (issue 45, "One store for apps and
/// the tool"): an app's own store keeps its passwords and certificates apart from the shared ones and every other
/// app's, in the keyring as in the private file; in the shared store an app's sign-out removes only what it added.
/// Two apps sharing the store and one with its own, each an `AuthenticationManager` of its own, on one in-memory
/// Secret Service (or, without a session bus, the private files) and one home.
@Suite("Network credentials in a store scope")
struct NetworkCredentialScopeTests {
    static func url(_ host: String) -> URL { URL(string: "https://\(host).example.com/arcgis")! }
    static func space(_ host: String) -> ProtectionSpace { ProtectionSpace(url: url(host))! }

    /// A manager of `scope` on `storage` in `directory`'s home: the keyring when `keyring`, else the private files.
    static func manager(
        _ scope: CredentialStoreScope, _ directory: TemporaryDirectory, _ storage: InMemorySecretStorage, keyring: Bool
    ) async throws -> AuthenticationManager {
        let manager = AuthenticationManager(
            settings: SignInSettings(
                browser: nil, httpClient: ScriptedHTTPClient([]),
                logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
            ))
        try await manager.setupPersistentCredentialStorage(
            requiringKeyring: false, environment: PersistentStorageFallbackTests.environment(directory, bus: keyring),
            storage: storage, scope: scope)
        return manager
    }

    /// The hosts whose passwords a fresh manager of `scope` loads.
    static func hosts(
        _ scope: CredentialStoreScope, _ directory: TemporaryDirectory, _ storage: InMemorySecretStorage, keyring: Bool
    ) async throws -> [String] {
        let store = try await manager(scope, directory, storage, keyring: keyring).networkCredentialStore
        #expect(store.storageLocation.kind == (keyring ? .keyring : .file), "\(store.storageLocation)")
        return await store.protectionSpaces.map { String($0.host.prefix { $0 != "." }) }.sorted()
    }

    @Test(
        "an app's own network credentials are its own; a shared app's sign-out removes only what it added",
        arguments: [true, false])
    func scopes(keyring: Bool) async throws {
        let directory = try TemporaryDirectory()
        let storage = InMemorySecretStorage()
        let viewer = CredentialStoreScope.shared(as: "viewer"), editor = CredentialStoreScope.shared(as: "editor")
        let field = CredentialStoreScope.app("com.example.field"),
            survey = CredentialStoreScope.app("com.example.survey")
        for (scope, host) in [(viewer, "viewer"), (editor, "editor"), (field, "field"), (survey, "survey")] {
            let store = try await Self.manager(scope, directory, storage, keyring: keyring).networkCredentialStore
            try await store.add(.password(username: "u-\(host)", password: "p-\(host)"), for: Self.space(host))
            try await store.waitForPersistence()
        }

        #expect(try await Self.hosts(viewer, directory, storage, keyring: keyring) == ["editor", "viewer"])
        #expect(try await Self.hosts(field, directory, storage, keyring: keyring) == ["field"], "its own only")
        #expect(try await Self.hosts(survey, directory, storage, keyring: keyring) == ["survey"])

        let viewerManager = try await Self.manager(viewer, directory, storage, keyring: keyring)
        await viewerManager.signOut()
        try await viewerManager.networkCredentialStore.waitForPersistence()
        #expect(try await Self.hosts(editor, directory, storage, keyring: keyring) == ["editor"], "the editor's stays")
        #expect(try await Self.hosts(field, directory, storage, keyring: keyring) == ["field"])

        let fieldManager = try await Self.manager(field, directory, storage, keyring: keyring)
        await fieldManager.signOut()
        try await fieldManager.networkCredentialStore.waitForPersistence()
        #expect(try await Self.hosts(field, directory, storage, keyring: keyring).isEmpty)
        #expect(try await Self.hosts(survey, directory, storage, keyring: keyring) == ["survey"])
        #expect(try await Self.hosts(editor, directory, storage, keyring: keyring) == ["editor"])
    }

    @Test(
        "a credential stored before apps were recorded stays at a shared app's sign-out, and is replaced by one it adds"
    )
    func unrecorded() async throws {
        let storage = InMemorySecretStorage()
        let earlier = try NetworkCredentialStore(keyring: NetworkCredentialKeyring(storage: storage))
        try await earlier.add(.password(username: "alice", password: "old"), for: Self.space("old"))
        try await earlier.add(.password(username: "alice", password: "old"), for: Self.space("both"))

        let viewer = try NetworkCredentialStore(keyring: NetworkCredentialKeyring(storage: storage, owner: "viewer"))
        try await viewer.add(.password(username: "alice", password: "new"), for: Self.space("both"))
        #expect(storage.items.filter { $0.attributes["host"] == "both.example.com" }.map(\.secret) == ["new"])
        await viewer.removeAll()
        #expect(storage.items.map { $0.attributes["host"] } == ["old.example.com"])
    }
}
