import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthCore

/// The proxy-token choice kept with an IAP sign-in: written as `proxy_token`, read back, absent in older stores.
@Suite("Stored credential: the proxy-token choice")
struct StoredProxyTokenTests {
    static func entry(_ changes: [String: JSONValue] = [:]) -> JSONValue {
        var object: JSONObject = [
            "kind": .string("iap"), "client_id": .string("c"), "redirect_url": .string("http://127.0.0.1/callback"),
            "authorize_url": .string("https://idp.example/authorize"),
            "token_url": .string("https://idp.example/token"),
            "logout_url": .string("https://idp.example/logout"),
            "hosts_behind_proxy": .array([.string("*.example.com")]),
            "access_token": .string("AT"), "access_token_expires_at": .integer(1_763_780_000),
            "id_token": .string("ID"),
        ]
        for (key, value) in changes { object[key] = value }
        return .object(object)
    }

    @Test("an entry written before the choice was recorded loads without one, and writes none")
    func olderEntry() throws {
        let record = try #require(StoredCredential(json: Self.entry()))
        #expect(record.proxyToken == nil)
        #expect(record.json["proxy_token"] == nil)
    }

    @Test(
        "a choice is written and read back; a value this version does not know reads as no choice",
        arguments: [
            (JSONValue.string("access"), IAPTokenInfo.Token?.some(.accessToken)),
            (.string("id"), .idToken),
            (.string("both"), nil),
            (.integer(1), nil),
        ])
    func roundTrip(stored: JSONValue, expected: IAPTokenInfo.Token?) throws {
        let record = try #require(StoredCredential(json: Self.entry(["proxy_token": stored])))
        #expect(record.proxyToken == expected)
        #expect(StoredCredential(json: record.json) == record)
    }

    @Test(
        "a credential read from the store starts with the stored choice; setting one sets what it sends and its record")
    func credential() throws {
        let stored = try #require(StoredCredential(json: Self.entry(["proxy_token": .string("access")])))
        let credential = IAPCredential(record: stored, persistence: nil, settings: SignInSettings())
        #expect(credential.tokenSentToProxy == .accessToken)
        #expect(credential.storedTokenSentToProxy == .accessToken)

        let older = IAPCredential(
            record: try #require(StoredCredential(json: Self.entry())), persistence: nil, settings: SignInSettings())
        #expect(older.tokenSentToProxy == .idToken)
        #expect(older.storedTokenSentToProxy == nil)
        older.storedTokenSentToProxy = .accessToken
        #expect(older.tokenSentToProxy == .accessToken)
        #expect(older.keeper.current.json["proxy_token"] == .string("access"))

        // What a command sets for one run (a flag) is not stored.
        credential.sendToProxyForThisProcess(.idToken)
        #expect(credential.tokenSentToProxy == .idToken)
        #expect(credential.storedTokenSentToProxy == .accessToken)
        #expect(credential.keeper.current.proxyToken == .accessToken)
    }

    @Test("tokenSentToProxy set by an app is kept with the credential: written to the store, read back (issue 45)")
    func publicChoicePersisted() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.store()
        let credential = IAPCredential(
            record: try #require(StoredCredential(json: Self.entry())), persistence: nil, settings: SignInSettings())
        credential.tokenSentToProxy = .accessToken
        let store = try ArcGISCredentialStore.makePersistent(file: file)
        try await store.addAndPersist(credential)
        let loaded = try #require(ArcGISCredentialStore.makePersistent(file: file).credentials.first?.kind.iap)
        #expect(loaded.tokenSentToProxy == .accessToken)
    }
}
