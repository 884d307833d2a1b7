import Foundation
import Testing
@testable import PortalAuth
import PortalAuthTesting
@testable import PortalAuthStore

/// `TokenCredential`, `OAuthApplicationCredential` and `PregeneratedTokenCredential` in a persistent
/// `ArcGISCredentialStore`: kept across a reload (the SDK's "pre-populated with saved credentials"), the secrets a
/// kind renews with kept with it, in the keyring item rather than the index when the keyring is used.
@Suite("Token, application and pregenerated credentials in a persistent store")
struct StoredTokenCredentialTests {
    static let portal = URL(string: "https://gis.example.com/portal")!
    static let server = URL(string: "https://gis.example.com/server/rest/services/Roads/FeatureServer/0")!

    /// A portal that answers generateToken with `token` and the client credentials grant with `application`.
    static func portalHTTP(token: String = "GENERATED-2", application: String = "APP-2") -> ScriptedHTTPClient {
        ScriptedHTTPClient(respond: { request, _ in
            let path = request.url.path
            if path.hasSuffix("generateToken") {
                let expires = Int64(Date().addingTimeInterval(3600).timeIntervalSince1970 * 1000)
                return SignOutFakes.response(
                    body: #"{"token":"\#(token)","expires":\#(expires),"ssl":true}"#, url: request.url)
            }
            return SignOutFakes.response(
                body: #"{"access_token":"\#(application)","expires_in":7200}"#, url: request.url)
        })
    }

    static func tokenCredential(http: ScriptedHTTPClient, expiresIn: TimeInterval) -> TokenCredential {
        TokenCredential.restored(
            url: portal, username: "alice", password: "PASSWORD-SECRET", referer: "https://app.example.com",
            tokenExpirationMinutes: 60,
            service: TokenService(generateTokenURL: portal.appending(path: "sharing/rest/generateToken"), root: portal),
            token: TokenInfo(
                accessToken: "GENERATED-1", expirationDate: Date().addingTimeInterval(expiresIn), isSSLRequired: true)!,
            httpClient: http, now: { Date() })
    }

    static func applicationCredential(http: ScriptedHTTPClient, expiresIn: TimeInterval) throws
        -> OAuthApplicationCredential
    {
        try OAuthApplicationCredential.restored(
            portalURL: portal, clientID: "app-client", clientSecret: "CLIENT-SECRET", tokenExpirationMinutes: nil,
            token: TokenInfo(
                accessToken: "APP-1", expirationDate: Date().addingTimeInterval(expiresIn), isSSLRequired: false)!,
            httpClient: http, now: { Date() })
    }

    static let pregenerated = PregeneratedTokenCredential(
        url: server,
        tokenInfo: TokenInfo(
            accessToken: "PREGENERATED-1", expirationDate: Date(timeIntervalSince1970: 2_000_000_000),
            isSSLRequired: true)!,
        referer: "https://app.example.com")

    @Test(
        "all three come back after a reload, with their tokens, expiry, referer and user; the file keeps only the secrets they renew with"
    )
    func reloadFromFile() async throws {
        let temporary = try TemporaryDirectory()
        let file = temporary.store()
        let http = Self.portalHTTP()
        let store = try ArcGISCredentialStore.makePersistent(file: file, settings: SignOutFakes.settings(http: http))
        store.add(Self.pregenerated)
        store.add(Self.tokenCredential(http: http, expiresIn: 3600))
        try await store.addAndPersist(try Self.applicationCredential(http: http, expiresIn: 3600))
        try await store.waitForPersistence()

        let reloaded = try ArcGISCredentialStore.makePersistent(file: file, settings: SignOutFakes.settings(http: http))
        #expect(reloaded.unreadableEntries.isEmpty)
        #expect(reloaded.credentials.map(\.kind.name).sorted() == ["oauth-application", "pregenerated-token", "token"])
        let pregenerated = try #require(reloaded.credentials.compactMap { $0 as? PregeneratedTokenCredential }.first)
        #expect(try await pregenerated.tokenInfo.accessToken == "PREGENERATED-1")
        #expect(try await pregenerated.tokenInfo.isSSLRequired)
        #expect(pregenerated.referer == "https://app.example.com")
        #expect(pregenerated.canBeUsed(for: Self.server.appending(path: "query")))
        let token = try #require(reloaded.credentials.compactMap { $0 as? TokenCredential }.first)
        #expect(token.username == "alice")
        #expect(try await token.tokenInfo.accessToken == "GENERATED-1")
        #expect(token.canBeUsed(for: Self.portal.appending(path: "sharing/rest/portals/self")))
        let application = try #require(reloaded.credentials.compactMap { $0 as? OAuthApplicationCredential }.first)
        #expect(application.clientID == "app-client")
        #expect(try await application.tokenInfo.accessToken == "APP-1")
        #expect(http.requests.isEmpty, "nothing was generated again")

        // A pregenerated token cannot be renewed: its entry holds no password or secret.
        let text = try String(contentsOfFile: file.path, encoding: .utf8)
        let entries = try file.read()
        for key in entries.keys {
            let entry = try #require(entries.entry(for: key))
            let kind = entry["kind"]?.stringValue
            #expect((entry["password"] != nil) == (kind == "token"), "\(key)")
            #expect((entry["client_secret"] != nil) == (kind == "oauth-application"), "\(key)")
        }
        #expect(text.contains("PASSWORD-SECRET") && text.contains("CLIENT-SECRET"))
    }

    @Test(
        "an expired token read back is generated again with the kept password or secret, and adding again replaces, not duplicates"
    )
    func renewAfterReload() async throws {
        let temporary = try TemporaryDirectory()
        let file = temporary.store()
        let first = Self.portalHTTP()
        let store = try ArcGISCredentialStore.makePersistent(file: file, settings: SignOutFakes.settings(http: first))
        try await store.addAndPersist(Self.tokenCredential(http: first, expiresIn: -10))
        try await store.addAndPersist(try Self.applicationCredential(http: first, expiresIn: -10))
        try await store.addAndPersist(Self.tokenCredential(http: first, expiresIn: -10))
        #expect(try file.read().keys.count == 2)

        let http = Self.portalHTTP(token: "GENERATED-2", application: "APP-2")
        let reloaded = try ArcGISCredentialStore.makePersistent(file: file, settings: SignOutFakes.settings(http: http))
        let token = try #require(reloaded.credentials.compactMap { $0 as? TokenCredential }.first)
        #expect(try await token.tokenInfo.accessToken == "GENERATED-2")
        let application = try #require(reloaded.credentials.compactMap { $0 as? OAuthApplicationCredential }.first)
        #expect(try await application.tokenInfo.accessToken == "APP-2")
        let sent = http.requests.map { SignOutFakes.fields(of: $0) }
        #expect(
            sent.contains {
                $0["username"] == "alice" && $0["password"] == "PASSWORD-SECRET"
                    && $0["referer"] == "https://app.example.com"
            })
        #expect(sent.contains { $0["client_id"] == "app-client" && $0["client_secret"] == "CLIENT-SECRET" })

        try await reloaded.remove(token)
        #expect(try file.read().keys.count == 1)
        try await reloaded.removeAllAndPersist()
        #expect(try file.read().keys.isEmpty)
    }

    @Test("with the keyring, the password, secret and tokens are in the keyring item, never in the index file")
    func keyringKeepsSecrets() async throws {
        let temporary = try TemporaryDirectory()
        let storage = InMemorySecretStorage()
        var file = temporary.store()
        file.secretStorage = storage
        file.backend = .keyring
        let http = Self.portalHTTP()
        let store = try ArcGISCredentialStore.makePersistent(file: file, settings: SignOutFakes.settings(http: http))
        try await store.addAndPersist(Self.tokenCredential(http: http, expiresIn: 3600))
        try await store.addAndPersist(try Self.applicationCredential(http: http, expiresIn: 3600))
        try await store.addAndPersist(Self.pregenerated)
        let index = try String(contentsOfFile: file.path, encoding: .utf8)
        for secret in ["PASSWORD-SECRET", "CLIENT-SECRET", "GENERATED-1", "APP-1", "PREGENERATED-1"] {
            #expect(!index.contains(secret), "\(secret) in the index file")
        }
        #expect(storage.items.count == 3)
        let reloaded = try ArcGISCredentialStore.makePersistent(file: file, settings: SignOutFakes.settings(http: http))
        #expect(reloaded.credentials.count == 3)
        let token = try #require(reloaded.credentials.compactMap { $0 as? TokenCredential }.first)
        #expect(try await token.tokenInfo.accessToken == "GENERATED-1")
    }
}
