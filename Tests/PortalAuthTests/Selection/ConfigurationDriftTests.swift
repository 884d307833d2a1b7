import Foundation
import Testing
@testable import PortalAuth
import PortalAuthTesting

/// The configuration file is the truth (issue 35, item 5): a stored IAP sign-in whose file changed uses the file's
/// current configuration when it names the same provider and client, and says what differs when it does not.
@Suite("IAP configuration drift")
struct ConfigurationDriftTests {
    typealias Fakes = SignOutFakes

    /// The text of an IAP configuration file like the one `SignOutFakes.record(.iap)` was signed in with.
    static func file(
        authorize: String = "https://idp.example.com/oauth2/authorize",
        token: String = "https://idp.example.com/oauth2/token",
        clientID: String = "iap-client", hosts: [String] = ["maps.example.com"]
    ) -> String {
        let hostList = hosts.map { "\"\($0)\"" }.joined(separator: ", ")
        return """
            {"authorize_url": "\(authorize)", "token_url": "\(token)", "logout_url": "https://idp.example.com/oauth2/logout",
             "client_id": "\(clientID)", "redirect_url": "http://127.0.0.1/callback", "scope": ["openid"],
             "hosts_behind_proxy": [\(hostList)]}
            """
    }

    /// A temporary folder holding `iap.json` with `text`, and a stored record signed in with it.
    struct Scratch {
        let folder: URL
        let path: String
        var record: StoredCredential

        init(_ text: String) throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("drift-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            path = folder.appendingPathComponent("iap.json").resolvingSymlinksInPath().path
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            record = Fakes.record(.iap)
            record.configurationFile = path
        }

        func write(_ text: String) throws { try Data(text.utf8).write(to: URL(fileURLWithPath: path)) }
        func remove() { try? FileManager.default.removeItem(at: folder) }

        func credential() throws -> IAPCredential {
            try #require(record.credential(persistence: nil, settings: SignInSettings(browser: nil)).kind.iap)
        }
    }

    static let addedHost = URL(string: "https://reports.example.com/api/items")!

    @Test("a host added to the file gets the token at once; the stored copy follows the file")
    func hostAdded() throws {
        let scratch = try Scratch(Self.file())
        defer { scratch.remove() }
        #expect(try !scratch.credential().canBeUsed(for: Self.addedHost), "not covered before the edit")
        try scratch.write(Self.file(hosts: ["maps.example.com", "reports.example.com"]))
        let credential = try scratch.credential()
        #expect(credential.canBeUsed(for: Self.addedHost))
        #expect(credential.canBeUsed(for: URL(string: "https://maps.example.com/portal")!))
        #expect(credential.configurationChange == nil)
        #expect(credential.keeper.current.hostsBehindProxy == ["maps.example.com", "reports.example.com"])
        #expect(
            credential.configuration.redirectURL == scratch.record.redirectURL,
            "the redirect URL used at sign-in is kept")
    }

    @Test("a host removed from the file no longer gets the token")
    func hostRemoved() throws {
        let scratch = try Scratch(Self.file(hosts: ["other.example.com"]))
        defer { scratch.remove() }
        #expect(try !scratch.credential().canBeUsed(for: URL(string: "https://maps.example.com/portal")!))
    }

    @Test(
        "a file that is gone, or cannot be read as a configuration, leaves the stored copy in use",
        arguments: [nil, "{ not json"])
    func unreadable(text: String?) throws {
        let scratch = try Scratch(Self.file())
        defer { scratch.remove() }
        if let text { try scratch.write(text) } else { try FileManager.default.removeItem(atPath: scratch.path) }
        let credential = try scratch.credential()
        #expect(credential.canBeUsed(for: URL(string: "https://maps.example.com/portal")!))
        #expect(credential.configurationChange == nil)
    }

    @Test(
        "another provider or client: the stored copy stays, what differs is said",
        arguments: [
            (file(clientID: "new-client"), ["client_id is now new-client (the sign-in's: iap-client)"]),
            (
                file(authorize: "https://login.other.example/authorize", token: "https://login.other.example/token"),
                [
                    "the identity provider's authorize_url is now https://login.other.example/authorize (the sign-in's: https://idp.example.com/oauth2/authorize)",
                    "token_url is now https://login.other.example/token (the sign-in's: https://idp.example.com/oauth2/token)",
                ]
            ),
        ])
    func differs(text: String, differences: [String]) async throws {
        let scratch = try Scratch(Self.file())
        defer { scratch.remove() }
        try scratch.write(text)
        let credential = try scratch.credential()
        let change = try #require(credential.configurationChange)
        #expect(change.differences == differences)
        #expect(credential.configuration.clientID == "iap-client", "the tokens are still the stored registration's")

        // Naming the file: a sign-in is needed, and the error says what differs.
        let store = ArcGISCredentialStore()
        store.add(credential)
        let error = await #expect(throws: SelectionError.self) {
            try await SignInSelection.select(
                .iap(file: URL(fileURLWithPath: scratch.path)), in: store, preferences: .init())
        }
        #expect(error?.configurationChange?.differences == differences)
        #expect(error?.category == .refused)
        #expect(error.map { "\($0)".contains(differences[0]) } == true)
    }

    @Test("another client, but a sign-in to the file's provider and client is stored too: that one is the file's")
    func differsButSignedIn() async throws {
        let scratch = try Scratch(Self.file())
        defer { scratch.remove() }
        try scratch.write(Self.file(clientID: "new-client"))
        let store = ArcGISCredentialStore()
        store.add(try scratch.credential())
        var current = Fakes.record(.iap)
        current.clientID = "new-client"
        current.configurationFile = "/elsewhere/copy.json"
        store.add(Fakes.iapCredential(current, http: Fakes.HTTP(status: 200, body: "{}")))
        let found = try await SignInSelection.select(
            .iap(file: URL(fileURLWithPath: scratch.path)), in: store, preferences: .init())
        #expect(found?.kind.iap?.configuration.clientID == "new-client")
    }

    @Test(
        "compare: the same file is unchanged; other hosts, logout URL or scopes are an update",
        arguments: [
            (file(), false), (file(hosts: ["maps.example.com", "*.example.org"]), true),
        ])
    func compare(text: String, updated: Bool) throws {
        let stored = try #require(
            IAPConfiguration.report(parsing: Data(Self.file().utf8), file: URL(fileURLWithPath: "/x/iap.json"))
                .configuration)
        let current = try #require(
            IAPConfiguration.report(parsing: Data(text.utf8), file: URL(fileURLWithPath: "/x/iap.json")).configuration)
        switch IAPConfigurationChange.compare(stored: stored, current: current) {
        case .unchanged: #expect(!updated)
        case .updated(let configuration): #expect(updated && configuration == current)
        case .differs: Issue.record("the same provider and client differ")
        }
    }
}
