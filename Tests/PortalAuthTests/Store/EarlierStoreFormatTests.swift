import Foundation
import Testing
@testable import PortalAuth
import PortalAuthTesting
@testable import PortalAuthCore
@testable import PortalAuthStore
@testable import PortalAuthTransport

/// Store files as each earlier version wrote them (`Fixtures/store/`, one per format the store has had) keep working
/// after an upgrade: every entry loads, and an IAP sign-in refreshes and takes the new ID token — an entry written
/// before `jwks_uri` was recorded looks the provider's keys up once, and stores them (issue 45).
@Suite("Stores written by earlier versions")
struct EarlierStoreFormatTests {
    static let issuer = "https://idp.example/o"
    static let discoveryURL = URL(string: "https://idp.example/o/.well-known/openid-configuration")!
    static let jwksURI = URL(string: "https://idp.example/o/keys")!

    /// Every store-file fixture: the formats in the order they appeared.
    static let formats = [
        "2026-11-22-first.json", "2026-11-22-refresh-token-age.json", "2026-11-24-requested-scopes.json",
        "2026-11-24-provider-key.json", "2026-11-25-jwks-uri.json", "2026-11-25-userinfo.json",
        "2026-11-25-proxy-token.json", "2026-11-27-issued-at.json",
    ]

    static func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: FixtureFiles.root.appendingPathComponent("store").appendingPathComponent(name))
    }

    /// The identity provider of the fixtures: its token endpoint answers a refresh with a new ID token signed with
    /// a rotated key, its discovery document names its keys, and the portal's token endpoint answers too.
    static func provider(publishingDiscovery: Bool = true) -> ScriptedHTTPClient {
        ScriptedHTTPClient { _, request in
            func json(_ text: String) -> TransportResponse {
                TransportResponse(
                    statusCode: 200, headers: [("Content-Type", "application/json")], body: Data(text.utf8),
                    url: request.url)
            }
            switch request.url {
            case discoveryURL where publishingDiscovery:
                return json(
                    #"{"issuer":"\#(issuer)","authorization_endpoint":"\#(issuer)/authorize","token_endpoint":"\#(issuer)/token","jwks_uri":"\#(jwksURI.absoluteString)","response_types_supported":["code"],"subject_types_supported":["public"],"id_token_signing_alg_values_supported":["RS256"]}"#
                )
            case jwksURI:
                return json(JWSFixtures.keySetText("jwksRotated"))
            case URL(string: "\(issuer)/token")!:
                return json(
                    #"{"access_token":"access-new","refresh_token":"refresh-new","token_type":"Bearer","expires_in":300,"id_token":"\#(JWSFixtures.token("RS256-rotated"))"}"#
                )
            default:
                if request.url.path.hasSuffix("/oauth2/token") {
                    return json(#"{"access_token":"portal-access-new","expires_in":1800}"#)
                }
                return TransportResponse(statusCode: 404, headers: [], body: Data(), url: request.url)
            }
        }
    }

    /// A store in a new temporary directory holding `data` as its file.
    static func store(holding data: Data, in temporary: TemporaryDirectory) throws -> CredentialStoreFile {
        let store = temporary.store()
        try FileManager.default.createDirectory(
            atPath: store.location.directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        #expect(
            FileManager.default.createFile(atPath: store.path, contents: data, attributes: [.posixPermissions: 0o600]))
        return store
    }

    /// Loads the store, refreshes its IAP sign-in and checks the new ID token was taken and stored with its keys;
    /// a second refresh looks nothing up again.
    static func refreshesWithNewIDToken(_ store: CredentialStoreFile) async throws {
        let client = provider()
        let settings = SignInSettings(httpClient: client)
        let loaded = try ArcGISCredentialStore.makePersistent(file: store, settings: settings)
        #expect(loaded.unreadableEntries.isEmpty, "\(loaded.unreadableEntries)")
        let iap = try #require(loaded.credentials.compactMap(\.kind.iap).first)
        let refreshed = try await iap.keeper.validCredential(force: true, now: { JWSFixtures.now })
        #expect(refreshed.accessToken == "access-new")
        #expect(refreshed.idTokenRefusal == nil, "\(refreshed.idTokenRefusal ?? "")")
        #expect(refreshed.idToken == JWSFixtures.token("RS256-rotated"))

        // Stored under the key it was read under (an older key form included): one IAP entry, with the new tokens.
        let stored = try store.read()
        let keys = stored.keys.filter { $0.hasPrefix("iap|") }
        #expect(keys.count == 1, "\(keys)")
        let entry = try #require(keys.first.flatMap(stored.entry(for:)).flatMap { StoredCredential(json: .object($0)) })
        #expect(entry.idToken == JWSFixtures.token("RS256-rotated"))
        #expect(entry.jwksURI == jwksURI)

        // Once: the keys are known now, and a second refresh fetches no discovery document.
        let lookups = client.requests.filter { $0.url == discoveryURL }.count
        #expect(lookups <= 1)
        _ = try await iap.keeper.validCredential(force: true, now: { JWSFixtures.now.addingTimeInterval(1) })
        #expect(client.requests.filter { $0.url == discoveryURL }.count == lookups)
        for portal in loaded.credentials.compactMap(\.kind.oAuthUser) {
            #expect(
                try await portal.keeper.validCredential(force: true, now: { JWSFixtures.now }).accessToken
                    == "portal-access-new")
        }
    }

    @Test(
        "an entry of every earlier store format loads and refreshes, and the new ID token is kept", arguments: formats)
    func everyFormat(name: String) async throws {
        let temporary = try TemporaryDirectory()
        try await Self.refreshesWithNewIDToken(try Self.store(holding: Self.fixture(name), in: temporary))
    }

    @Test("an entry without jwks_uri looks the provider's keys up once and stores them, and one that has them does not")
    func lookUpOnce() async throws {
        for (name, lookups) in [("2026-11-24-provider-key.json", 1), ("2026-11-25-jwks-uri.json", 0)] {
            let temporary = try TemporaryDirectory()
            let store = try Self.store(holding: Self.fixture(name), in: temporary)
            let client = Self.provider()
            let loaded = try ArcGISCredentialStore.makePersistent(
                file: store, settings: SignInSettings(httpClient: client))
            let iap = try #require(loaded.credentials.compactMap(\.kind.iap).first)
            _ = try await iap.keeper.validCredential(force: true, now: { JWSFixtures.now })
            #expect(client.requests.filter { $0.url == Self.discoveryURL }.count == lookups, "\(name)")
        }
    }

    @Test(
        "a provider without a discovery document is looked up once; the new ID token is refused, the other tokens kept")
    func noDiscoveryOnce() async throws {
        let temporary = try TemporaryDirectory()
        let store = try Self.store(holding: Self.fixture("2026-11-24-provider-key.json"), in: temporary)
        let client = Self.provider(publishingDiscovery: false)
        let loaded = try ArcGISCredentialStore.makePersistent(file: store, settings: SignInSettings(httpClient: client))
        let iap = try #require(loaded.credentials.compactMap(\.kind.iap).first)
        let refreshed = try await iap.keeper.validCredential(force: true, now: { JWSFixtures.now })
        #expect(refreshed.accessToken == "access-new" && refreshed.refreshToken == "refresh-new")
        #expect(refreshed.idToken == JWSFixtures.token("RS256"))
        // The refusal is whole, as the tool shows it: issue 45's sentence ended "… give ; the new access …".
        let refusal = try #require(refreshed.idTokenRefusal)
        #expect(refusal.hasSuffix("give that issuer (IAPConfiguration.issuer)"), "\(refusal)")
        #expect(EmptyValueMessageTests.gaps(in: refusal).isEmpty, "\(refusal)")
        let lookups = client.requests.filter { $0.url.path.contains("/.well-known/") }.count
        #expect(lookups >= 1)
        _ = try await iap.keeper.validCredential(force: true, now: { JWSFixtures.now.addingTimeInterval(1) })
        #expect(client.requests.filter { $0.url.path.contains("/.well-known/") }.count == lookups)
    }

    @Test("a keyring store's index of an earlier version (secrets in the keyring) refreshes, the new ID token kept")
    func keyringIndex() async throws {
        let temporary = try TemporaryDirectory()
        var store = try Self.store(holding: Self.fixture("2026-11-24-keyring-index.json"), in: temporary)
        let keyring = InMemorySecretStorage()
        let key = "iap|https://idp.example/o/authorize|portal-auth-test|alice"
        let item = String(decoding: try Self.fixture("2026-11-24-keyring-item.json"), as: UTF8.self)
        keyring.plant(
            .init(
                schema: .credential,
                attributes: KeyringEntryFormat.itemAttributes(
                    storePath: store.path, key: key,
                    reference: KeyringReference(generation: "0123456789abcdef0123456789abcdef", sequence: 1)),
                secret: item.trimmingCharacters(in: .whitespacesAndNewlines)))
        store.secretStorage = keyring
        store.backend = .keyring
        try await Self.refreshesWithNewIDToken(store)
        #expect(
            !(try String(contentsOfFile: store.path, encoding: .utf8)).contains("access-new"), "no token in the index")
    }
}
