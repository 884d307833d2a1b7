import Foundation
import Testing
import PortalAuth

/// Picking the stored sign-in without saying which (the only one, the default), by name, and by a copy of an IAP
/// configuration file; an older store's path-keyed IAP entry. No server: the prepared tokens are valid for hours.
@Suite("choosing a stored sign-in")
struct SignInSelectionCommandTests {
    static let portalA = "https://a.example.test/portal"
    static let portalB = "https://b.example.test/portal"

    @Test("one stored sign-in: token, exec and status use it with no option")
    func onlyOne() async throws {
        let store = try PreparedStore()
        try await store.write([PreparedStore.portal(Self.portalA, token: "token-a")])
        let token = try await ToolRunner.run(["token"], environment: store.environment)
        #expect(token.status == 0 && token.stdout == "token-a\n", "\(token)")
        let status = try await ToolRunner.run(["status", "--quiet"], environment: store.environment)
        #expect(status.status == 0 && status.stdout.isEmpty && status.stderr.isEmpty, "\(status)")
    }

    @Test("several: an error lists them and names `portal-auth use`; `use` sets the default that token and status show")
    func defaultSignIn() async throws {
        let store = try PreparedStore()
        try await store.write([
            PreparedStore.portal(Self.portalA, token: "token-a"), PreparedStore.portal(Self.portalB, token: "token-b"),
        ])
        let ambiguous = try await ToolRunner.run(["token"], environment: store.environment)
        #expect(ambiguous.status == 64, "\(ambiguous)")
        #expect(ambiguous.stderr.hasPrefix("portal-auth: error: 2 sign-ins are stored and none is the default"))
        #expect(
            ambiguous.stderr.contains("portal-auth use") && ambiguous.stderr.contains(Self.portalA)
                && ambiguous.stderr.contains(Self.portalB))
        #expect(ambiguous.stdout.isEmpty)

        let use = try await ToolRunner.run(["use", "--portal", Self.portalB], environment: store.environment)
        #expect(use.status == 0, "\(use)")
        let token = try await ToolRunner.run(["token"], environment: store.environment)
        #expect(token.stdout == "token-b\n", "\(token)")
        let status = try await ToolRunner.run(["status"], environment: store.environment)
        #expect(status.stdout.contains("Portal \(Self.portalB) (default)"), "\(status)")
        #expect(!status.stdout.contains("Portal \(Self.portalA) (default)"))
        let json = try JSONValue.parse(
            Data(try await ToolRunner.run(["status", "--format", "json"], environment: store.environment).stdout.utf8))
        let flagged = json["credentials"]?.arrayValue?.filter { $0["default"]?.boolValue == true }.compactMap {
            $0["url"]?.stringValue
        }
        #expect(flagged == [Self.portalB])

        _ = try await ToolRunner.run(["use", "--clear"], environment: store.environment)
        #expect(try await ToolRunner.run(["token"], environment: store.environment).status == 64)
    }

    @Test("names: given, used with --name, renamed, removed; an unknown name is a usage error")
    func names() async throws {
        let store = try PreparedStore()
        try await store.write([
            PreparedStore.portal(Self.portalA, token: "token-a"), PreparedStore.portal(Self.portalB, token: "token-b"),
        ])
        let named = try await ToolRunner.run(
            ["name", "work", "--portal", Self.portalA], environment: store.environment)
        #expect(named.status == 0, "\(named)")
        #expect(
            try await ToolRunner.run(["token", "--name", "work"], environment: store.environment).stdout == "token-a\n")
        #expect(
            try await ToolRunner.run(["status"], environment: store.environment).stdout.contains(
                "Portal \(Self.portalA) (name: work)"))

        let renamed = try await ToolRunner.run(["name", "home", "--name", "work"], environment: store.environment)
        #expect(renamed.status == 0, "\(renamed)")
        let old = try await ToolRunner.run(["token", "--name", "work"], environment: store.environment)
        #expect(
            old.status == 64 && old.stderr.contains("no stored sign-in is named \"work\"; the names are home"), "\(old)"
        )
        #expect(
            try await ToolRunner.run(["token", "--name", "home"], environment: store.environment).stdout == "token-a\n")

        #expect(try await ToolRunner.run(["name", "--remove", "home"], environment: store.environment).status == 0)
        #expect(try await ToolRunner.run(["token", "--name", "home"], environment: store.environment).status == 64)
        let bad = try await ToolRunner.run(["token", "--name", "no spaces"], environment: store.environment)
        #expect(
            bad.status == 64 && bad.stderr.hasPrefix("portal-auth: error: --name \"no spaces\" is not a sign-in name"),
            "\(bad)")
    }

    @Test("revoke deletes the sign-in and its name and default, keeps its app's client ID for the next sign-in")
    func revokeForgets() async throws {
        let store = try PreparedStore()
        let portal = "http://127.0.0.1:9/portal"  // nothing listens: the revocation fails, the entry is deleted anyway
        try await store.write([PreparedStore.portal(portal, clientID: "kept-client", token: "token-a")])
        _ = try await ToolRunner.run(["name", "work"], environment: store.environment)
        _ = try await ToolRunner.run(["use", "--name", "work"], environment: store.environment)
        let revoked = try await ToolRunner.run(
            ["revoke", "--name", "work", "--timeout", "10"], environment: store.environment)
        #expect(revoked.status == 69 && revoked.stderr.contains("deleted anyway"), "\(revoked)")
        let named = try await ToolRunner.run(["token", "--name", "work"], environment: store.environment)
        #expect(named.status == 64 && named.stderr.contains("no sign-in has a name yet"), "\(named)")
        let token = try await ToolRunner.run(["token", "--portal", portal], environment: store.environment)
        #expect(token.status == 77, "\(token)")
        #expect(token.stderr.contains("portal-auth login --portal \(portal) --client-id kept-client"), "\(token)")
        #expect(
            token.stderr.contains("portal-auth token --portal \(portal) --client-id kept-client --interactive"),
            "\(token)")
    }

    @Test("an identical copy of an IAP configuration file elsewhere is the same sign-in")
    func iapCopy() async throws {
        let store = try PreparedStore()
        let original = store.directory.appendingPathComponent("one/contoso-iap.json")
        let copy = store.directory.appendingPathComponent("two/contoso-iap.json")
        for file in [original, copy] {
            try FileManager.default.createDirectory(
                at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: Self.fixture("iap/entra.json"), to: file)
        }
        try await store.write([try PreparedStore.iap(file: original.path, token: "iap-token")])
        let viaCopy = try await ToolRunner.run(["token", "--iap", copy.path], environment: store.environment)
        #expect(viaCopy.status == 0 && viaCopy.stdout == "iap-token\n", "\(viaCopy)")
        let other = store.directory.appendingPathComponent("two/other.json")
        try FileManager.default.copyItem(at: Self.fixture("iap/oidc-generic.json"), to: other)
        let different = try await ToolRunner.run(["token", "--iap", other.path], environment: store.environment)
        #expect(different.status == 77, "another provider's file is not signed in: \(different)")
    }

    @Test(
        "an older store's IAP entry keyed by the file's path still loads; a new sign-in replaces it under the new key")
    func legacyIAPKey() async throws {
        let store = try PreparedStore()
        let file = store.directory.appendingPathComponent("contoso-iap.json")
        try FileManager.default.copyItem(at: Self.fixture("iap/entra.json"), to: file)
        let legacyKey = "iap|\(file.resolvingSymlinksInPath().path)|6731de76-14a6-49ae-97bc-6eba6914391e"
        try await store.write([try PreparedStore.iap(file: file.path, token: "old-iap-token", key: legacyKey)])
        let token = try await ToolRunner.run(["token", "--iap", file.path], environment: store.environment)
        #expect(token.status == 0 && token.stdout == "old-iap-token\n", "\(token)")
        let status = try await ToolRunner.run(["status"], environment: store.environment)
        #expect(status.status == 0 && status.stdout.contains("IAP \(file.resolvingSymlinksInPath().path)"), "\(status)")

        // Stored again through the library (as a sign-in does): one entry, under the key of provider, client and user.
        let loaded = try ArcGISCredentialStore.makePersistent(
            file: CredentialStoreFile(location: StoreLocation(path: store.path)))
        let credential = try #require(loaded.credentials.first)
        try await loaded.addAndPersist(credential)
        let keys = try store.entries().keys.sorted()
        #expect(
            keys == [
                "iap|https://login.microsoftonline.com/3f2504e0-4f89-41d3-9a0c-0305e82c3301/oauth2/v2.0/authorize|6731de76-14a6-49ae-97bc-6eba6914391e|bob"
            ])
    }

    @Test("shell completion of --portal and --name lists the stored portals and names")
    func completion() async throws {
        let store = try PreparedStore()
        try await store.write([
            PreparedStore.portal(Self.portalA, token: "token-a"), PreparedStore.portal(Self.portalB, token: "token-b"),
        ])
        _ = try await ToolRunner.run(["name", "work", "--portal", Self.portalA], environment: store.environment)
        let portals = try await ToolRunner.run(
            ["---completion", "token", "--", "--portal", "2", "0", "portal-auth", "token", "--portal", ""],
            environment: store.environment)
        #expect(portals.status == 0, "\(portals)")
        #expect(portals.stdoutLines == [Self.portalA, Self.portalB], "\(portals)")
        let names = try await ToolRunner.run(
            ["---completion", "exec", "--", "--name", "2", "0", "portal-auth", "exec", "--name", ""],
            environment: store.environment)
        #expect(names.stdoutLines == ["work"], "\(names)")
    }

    /// A file under `Fixtures/`.
    static func fixture(_ path: String) -> URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures/\(path)")
    }
}
