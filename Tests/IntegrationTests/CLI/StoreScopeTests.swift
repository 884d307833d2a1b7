import Foundation
import Testing
@testable import PortalAuth

/// Two apps and the tool on one machine (issue 45, "One store for apps and the tool"): the tool's sign-in in the
/// shared store, an app that shares it and one with a store of its own (`Tests/StoreScopeApp`, public API only, each
/// a process of its own). An app's `signOut()` removes only what it added; the tool's sign-in and the other apps'
/// credentials stay.
@Suite("Store scopes: two apps and the tool", .serialized)
struct StoreScopeTests {
    let scratch: ScratchStore
    var home: String { scratch.directory.appendingPathComponent("home").path }
    var sharedPath: String { "\(home)/.local/state/portal-auth/credentials.json" }

    init() throws {
        scratch = try ScratchStore()
        // The tool's sign-in, as `portal-auth iap login` stores it (a fixture of `Fixtures/store/`).
        try StoreFixture.seed("2026-11-27-issued-at.json", at: sharedPath)
    }

    /// This home, no keyring (the stores are files), no store forced.
    var environment: [String: String] { ["HOME": home, "PORTAL_AUTH_STORE": ""] }
    static let removed = ["DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", "XDG_STATE_HOME", "PORTAL_AUTH_STORE"]

    func app(_ arguments: [String], environment: [String: String]? = nil) async throws -> ToolRunner.Result {
        let result = try await ToolRunner.run(
            arguments, environment: environment ?? self.environment, removing: Self.removed, timeout: .seconds(60),
            executable: BinaryLocator.testAppPath)
        try #require(result.status == 0, "\(arguments): \(result)")
        return result
    }

    func listed(_ arguments: [String]) async throws -> [String] {
        try await app(arguments + ["list"]).stdout.split(separator: "\n").map(String.init).sorted()
    }

    func toolSignIns() async throws -> Int {
        let status = try await ToolRunner.run(
            ["status", "--format", "json"], environment: environment, removing: Self.removed, timeout: .seconds(60))
        return try JSONValue.parse(Data(status.stdout.utf8))["credentials"]?.arrayValue?.count ?? -1
    }

    @Test("each app's sign-out removes what it added: the tool's sign-in and the other app's credentials stay")
    func twoAppsAndTheTool() async throws {
        let viewer = ["--shared", "viewer"], editor = ["--shared", "editor"], own = ["--own", "com.example.field"]
        let toolSignIn = "iap https://idp.example/o/authorize"
        try await _ = app(viewer + ["add", "viewer"])
        try await _ = app(editor + ["add", "editor"])
        try await _ = app(own + ["add", "field"])

        #expect(
            try await listed(viewer) == [
                toolSignIn, "token https://editor.example/arcgis", "token https://viewer.example/arcgis",
            ])
        #expect(try await listed(own) == ["token https://field.example/arcgis"], "the own store holds its own only")
        #expect(
            FileManager.default.fileExists(
                atPath: "\(home)/.local/state/portal-auth/apps/com.example.field/credentials.json"))

        try await _ = app(viewer + ["sign-out"])
        #expect(try await listed(editor) == [toolSignIn, "token https://editor.example/arcgis"])
        #expect(try await toolSignIns() == 1, "the tool's sign-in stays")
        #expect(try await listed(own) == ["token https://field.example/arcgis"])

        try await _ = app(own + ["sign-out"])
        #expect(try await listed(own).isEmpty)
        #expect(try await listed(editor) == [toolSignIn, "token https://editor.example/arcgis"])
        #expect(try await toolSignIns() == 1)
    }

    @Test(
        "network credentials follow the scope: an app's own are its own, a shared app's sign-out removes only its own; in the private file and in the keyring",
        arguments: [false, true])
    func networkCredentials(keyring: Bool) async throws {
        // The keyring may be the one scripts/test shares: hosts and apps named for this run only, removed at the end.
        let session = keyring ? try KeyringSession.shared() : nil
        var environment = self.environment
        if let session { environment["DBUS_SESSION_BUS_ADDRESS"] = session.busAddress }
        let run = UUID().uuidString.prefix(8).lowercased()
        let viewer = ["--shared", "viewer-\(run)"], editor = ["--shared", "editor-\(run)"]
        let own = ["--own", "com.example.field-\(run)"]
        func passwords(_ scope: [String]) async throws -> [String] {
            try await app(scope + ["list"], environment: environment).stdout.split(separator: "\n")
                .filter { $0.hasPrefix("password ") && $0.contains(run) }
                .map { String($0.dropFirst("password ".count).prefix { $0 != "-" }) }.sorted()
        }
        for (scope, name) in [(viewer, "viewer"), (editor, "editor"), (own, "field")] {
            try await _ = app(scope + ["add-password", "\(name)-\(run)"], environment: environment)
        }
        #expect(try await passwords(viewer) == ["editor", "viewer"])
        #expect(try await passwords(own) == ["field"], "the own store holds its own only")
        let files = [
            "\(home)/.local/state/portal-auth/credentials-network.json",
            "\(home)/.local/state/portal-auth/apps/com.example.field-\(run)/credentials-network.json",
        ]
        for file in files {
            #expect(
                FileManager.default.fileExists(atPath: file) != keyring, "\(file): in the keyring only when it answers")
        }

        try await _ = app(viewer + ["sign-out"], environment: environment)
        #expect(try await passwords(editor) == ["editor"], "the other app's stays")
        #expect(try await passwords(own) == ["field"])

        try await _ = app(own + ["sign-out"], environment: environment)
        #expect(try await passwords(own).isEmpty)
        #expect(try await passwords(editor) == ["editor"])

        try await _ = app(editor + ["sign-out"], environment: environment)
        #expect(try await passwords(editor).isEmpty)
        withExtendedLifetime(session) {}
    }

    @Test("an app identifier that cannot name a store is refused with what to give")
    func invalidIdentifier() async throws {
        let result = try await ToolRunner.run(
            ["--own", "../tool", "list"], environment: environment, removing: Self.removed, timeout: .seconds(60),
            executable: BinaryLocator.testAppPath)
        #expect(result.status == 70, "\(result)")
        #expect(result.stderr.contains("cannot name an app's credential store"), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: "\(home)/.local/state/portal-auth/tool"))
    }
}
