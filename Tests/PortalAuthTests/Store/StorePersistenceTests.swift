import Foundation
import Logging
import Testing
@testable import PortalAuth
import PortalAuthTesting
@testable import PortalAuthStore

/// The SDK's synchronous `ArcGISCredentialStore.add(_:)` and `removeAll()`: memory changes at once, the file follows
/// in order, and a write that fails is logged and thrown by `waitForPersistence()`.
@Suite("Credential store: synchronous changes, persistence that follows")
struct StorePersistenceTests {
    static func settings(_ logger: Logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        -> SignInSettings
    {
        SignInSettings(browser: nil, httpClient: ScriptedHTTPClient([]), logger: logger)
    }

    @Test("add and removeAll change memory at once; the file follows, in the order of the changes")
    func orderedPersistence() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.store()
        let store = try ArcGISCredentialStore.makePersistent(file: file, settings: Self.settings())
        let portal = SignOutFakes.portalCredential(http: ScriptedHTTPClient([]))
        let iap = SignOutFakes.iapCredential(http: ScriptedHTTPClient([]))

        store.add(portal)
        #expect(store.credentials.count == 1, "in memory before any write")
        store.removeAll()
        #expect(store.credentials.isEmpty)
        store.add(iap)
        #expect(try await store.waitForPersistence() == nil)
        #expect(try file.read().keys == [iap.storeKey], "the last change wins in the file too")
        // The credential written is attached to the file: a second store loads it.
        let reloaded = try ArcGISCredentialStore.makePersistent(file: file, settings: Self.settings())
        #expect(reloaded.credentials.map(\.kind.name) == ["iap"])
    }

    @Test("a write that fails keeps the credential in memory, logs an error, and is thrown by the next wait only")
    func failedWrite() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.store("state/credentials.json")
        let store = try ArcGISCredentialStore.makePersistent(
            file: file, settings: Self.settings(Logger(label: "test") { _ in CapturingLogHandler(storage: lines) }))
        // The store's folder becomes a plain file: no write can succeed (whoever runs the test).
        try Data("not a folder".utf8).write(to: URL(fileURLWithPath: "\(directory.path)/state"))
        let credential = SignOutFakes.portalCredential(http: ScriptedHTTPClient([]))

        store.add(credential)
        #expect(store.credentials.count == 1)
        await #expect(throws: CredentialStoreError.self) { try await store.waitForPersistence() }
        #expect(lines.text.contains("the credential store could not be written"))
        #expect(lines.text.contains(file.path))
        #expect(!lines.text.contains("ACCESS-SECRET") && !lines.text.contains("REFRESH-SECRET"))
        #expect(try await store.waitForPersistence() == nil, "a failure is reported once")
        #expect(store.credentials.count == 1, "the credential stays usable in memory")
        // The throwing form says so at once, and adds nothing.
        let other = SignOutFakes.iapCredential(http: ScriptedHTTPClient([]))
        await #expect(throws: CredentialStoreError.self) { try await store.addAndPersist(other) }
        #expect(store.credentials.count == 1)
    }

    let lines = LogLines()
}
