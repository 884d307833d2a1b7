import Foundation
import Testing
@testable import PortalAuth

/// `SignInSelection`: the one function that picks the stored sign-in for `token` (and its fast path), `refresh`,
/// `revoke`, `exec` and `status`.
@Suite("Sign-in selection")
struct SignInSelectionTests {
    static let portalA = URL(string: "https://a.example/portal")!
    static let portalB = URL(string: "https://b.example/portal")!

    /// A store in memory holding portal sign-ins to `portals`.
    static func store(_ portals: [URL]) -> ArcGISCredentialStore {
        let store = ArcGISCredentialStore()
        for portal in portals {
            var record = TokenKeeperTests.record(accessLeft: 3600)
            record.portalURL = portal
            store.add(OAuthUserCredential(record: record, persistence: nil, settings: SignInSettings(browser: nil)))
        }
        return store
    }

    static func portal(of credential: ArcGISCredential?) -> URL? { credential?.kind.oAuthUser?.configuration.portalURL }

    @Test("nothing said: the only one; none when nothing is stored")
    func onlyOne() async throws {
        #expect(
            Self.portal(
                of: try await SignInSelection.select(.automatic, in: Self.store([Self.portalA]), preferences: .init()))
                == Self.portalA)
        #expect(try await SignInSelection.select(.automatic, in: Self.store([]), preferences: .init()) == nil)
    }

    @Test("several: the default, else an error that lists them")
    func several() async throws {
        let store = Self.store([Self.portalA, Self.portalB])
        let error = await #expect(throws: SelectionError.self) {
            try await SignInSelection.select(.automatic, in: store, preferences: .init())
        }
        #expect(error?.category == .usage)
        #expect(error?.description.contains("make one the default") == true)
        #expect(error?.description.contains("SignInPreferences") == false, "a package type an app cannot use")
        let last = try #require(store.credentials.last)
        let keyB = try #require(SignInSelection.storeKey(of: last))
        let chosen = try await SignInSelection.select(
            .automatic, in: store, preferences: SignInPreferences(defaultKey: keyB))
        #expect(Self.portal(of: chosen) == Self.portalB)
        let stale = await #expect(throws: SelectionError.self) {
            try await SignInSelection.select(
                .automatic, in: store, preferences: SignInPreferences(defaultKey: "oauth-user|gone|x"))
        }
        #expect(stale != nil, "a default that points at a deleted sign-in is no default")
    }

    @Test("by name; an unknown name names the known ones")
    func byName() async throws {
        let store = Self.store([Self.portalA, Self.portalB])
        let first = try #require(store.credentials.first)
        let keyA = try #require(SignInSelection.storeKey(of: first))
        let preferences = SignInPreferences(names: ["work": keyA])
        #expect(
            Self.portal(of: try await SignInSelection.select(.name("work"), in: store, preferences: preferences))
                == Self.portalA)
        let error = await #expect(throws: SelectionError.self) {
            try await SignInSelection.select(.name("home"), in: store, preferences: preferences)
        }
        #expect(error?.description.contains("the names are work") == true)
    }

    @Test(
        "names: what is allowed",
        arguments: [
            ("work", true), ("a.b-c_d@e", true), ("", false), ("-x", false), ("two words", false), ("naïve", false),
        ])
    func validNames(name: String, valid: Bool) {
        #expect(SignInPreferences.isValidName(name) == valid)
    }

    @Test(
        "preferences: written 0600 beside the store and read back; apps remembered newest first; deleted sign-ins forgotten"
    )
    func preferencesFile() throws {
        let temporary = try TemporaryDirectory()
        let storePath = "\(temporary.path)/state/credentials.json"
        #expect(SignInPreferences.path(forStore: storePath) == "\(temporary.path)/state/credentials.preferences.json")
        var preferences = SignInPreferences(defaultKey: "k1", names: ["work": "k1", "home": "k2"])
        preferences.remember(.init(portalURL: Self.portalA, clientID: "old", redirectURL: nil))
        preferences.remember(
            .init(portalURL: Self.portalA, clientID: "new", redirectURL: URL(string: "http://127.0.0.1:8080/cb")))
        try preferences.save(forStore: storePath)
        var info = stat()
        #expect(stat(SignInPreferences.path(forStore: storePath), &info) == 0 && info.st_mode & 0o777 == 0o600)
        var loaded = try SignInPreferences.load(forStore: storePath)
        #expect(loaded == preferences)
        #expect(loaded.app(for: URL(string: "HTTPS://A.example/portal/")!)?.clientID == "new")
        loaded.forgetAllBut(["k2"])
        #expect(loaded.defaultKey == nil && loaded.names == ["home": "k2"])
        #expect(loaded.apps.count == 2, "apps outlive their sign-ins")

        try Data("not json".utf8).write(to: URL(fileURLWithPath: SignInPreferences.path(forStore: storePath)))
        let error = #expect(throws: SelectionError.self) { try SignInPreferences.load(forStore: storePath) }
        #expect(error?.description.contains("credentials.preferences.json") == true)
    }
}
