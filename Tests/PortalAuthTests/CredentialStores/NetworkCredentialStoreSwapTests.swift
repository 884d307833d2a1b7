import Foundation
import Testing
@testable import PortalAuth
import PortalAuthTesting

/// `AuthenticationManager.setNetworkCredentialStore(_:)`, the SDK's way (used by the toolkit's authenticator) to
/// replace the network credential store.
@Suite("AuthenticationManager.setNetworkCredentialStore")
struct NetworkCredentialStoreSwapTests {
    static let url = URL(string: "https://gis.example.com/portal/sharing/rest/portals/self?f=json")!

    @Test("the new store is the one requests use; the old one is left as it was")
    func requestsUseNewStore() async throws {
        let http = ScriptedHTTPClient(body: #"{"ok":true}"#)
        let manager = AuthenticatedRequestTests.manager(http)
        let space = try #require(ProtectionSpace(url: Self.url))
        let old = manager.networkCredentialStore
        try await old.add(.password(username: "old", password: "old-pass"), for: space)
        let new = NetworkCredentialStore()
        try await new.add(.password(username: "alice", password: "new-pass"), for: space)

        await manager.setNetworkCredentialStore(new)

        #expect(manager.networkCredentialStore === new)
        _ = try await manager.data(for: .get(Self.url))
        #expect(http.requests.count == 1)
        #expect(http.requests.first?.credentials.password?.username == "alice")
        #expect(await old.credentials(for: space).map(\.username) == ["old"])
    }

    @Test("an empty store is not asked; a credential added is used from the next request; removed, it is not sent")
    func emptyStoreSkipped() async throws {
        let http = ScriptedHTTPClient(body: #"{"ok":true}"#)
        let manager = AuthenticatedRequestTests.manager(http)
        let store = manager.networkCredentialStore
        let space = try #require(ProtectionSpace(url: Self.url))
        #expect(store.holdsNothing)
        _ = try await manager.data(for: .get(Self.url))
        try await store.add(.password(username: "alice", password: "pass"), for: space)
        #expect(!store.holdsNothing)
        _ = try await manager.data(for: .get(Self.url))
        await store.remove(.password, for: space)
        #expect(store.holdsNothing)
        _ = try await manager.data(for: .get(Self.url))
        try await store.add(.password(username: "bob", password: "pass"), for: space)
        await store.removeAll()
        #expect(store.holdsNothing)
        #expect(http.requests.map { $0.credentials.password?.username } == [nil, "alice", nil])
    }
}
