import Foundation
import Testing
@testable import PortalAuth

/// A scratch home folder for the tool (`HOME`, `XDG_STATE_HOME`, `XDG_CACHE_HOME` inside it) with a keyring's
/// session bus: the store chooses the keyring by itself (`--store auto`), its index at the default place.
struct KeyringScratch {
    let scratch: ScratchStore
    let keyring: KeyringSession

    private init(keyring: KeyringSession) throws {
        self.scratch = try ScratchStore()
        self.keyring = keyring
    }

    /// A new scratch home on the keyring `scripts/test` started (`KeyringSession.shared()`: a new private one when
    /// none was), for tests that leave the keyring as it is.
    static func onSharedKeyring() throws -> KeyringScratch {
        try KeyringScratch(keyring: try KeyringSession.shared())
    }

    /// A new scratch home on a private keyring of its own (`scripts/keyring start` in a new folder, stopped when the
    /// last copy of this value goes away), for tests that lock it, kill or pause its daemon.
    static func onPrivateKeyring() throws -> KeyringScratch {
        try KeyringScratch(keyring: try KeyringSession())
    }

    var home: String { scratch.directory.appendingPathComponent("home").path }
    /// The store file (the index) at its default place.
    var indexPath: String { "\(home)/.local/state/portal-auth/credentials.json" }

    /// The tool's environment: this home, the keyring's bus, no store forced.
    var environment: [String: String] {
        [
            "HOME": home, "XDG_STATE_HOME": "\(home)/.local/state", "XDG_CACHE_HOME": "\(home)/.cache",
            "DBUS_SESSION_BUS_ADDRESS": keyring.busAddress, "PORTAL_AUTH_STORE": "",
        ]
    }

    /// Signs in through the real browser with the tool.
    @discardableResult
    func signIn(_ kind: SignInKind, server: TestServer) async throws -> ToolRunner.Result {
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let arguments: [String] =
            switch kind {
            case .portal: ["login", "--portal", server.portal, "--client-id", server.clientID]
            case .iap: ["iap", "login", "--config", server.iapConfig]
            }
        let result = try await ToolRunner.run(
            arguments + ["--browser-command", server.browser, "--timeout", "90"],
            environment: environment.merging(["PORTAL_AUTH_TEST_BROWSER_TIMEOUT": "60"]) { $1 }, timeout: .seconds(120))
        try #require(result.status == 0, "sign-in failed: \(result)")
        return result
    }

    /// Runs the tool in this home.
    func run(_ arguments: [String], extra: [String: String] = [:]) async throws -> ToolRunner.Result {
        try await ToolRunner.run(arguments, environment: environment.merging(extra) { $1 }, timeout: .seconds(60))
    }

    /// The index file's entry of `kind`.
    func indexEntry(_ kind: SignInKind) throws -> (key: String, value: JSONValue) {
        let data = try Data(contentsOf: URL(fileURLWithPath: indexPath))
        let entries = try #require(try JSONValue.parse(data)["entries"]?.objectValue)
        let found = entries.members.first { $0.value["kind"]?.stringValue == kind.entryKind }
        let entry = try #require(found, "no \(kind) entry in the index")
        return (entry.key, entry.value)
    }

    /// The whole entry of `kind` as its keyring item holds it (tokens included).
    func itemEntry(_ kind: SignInKind) throws -> JSONValue {
        let (key, value) = try indexEntry(kind)
        let generation = try #require(value["keyring"]?["generation"]?.stringValue, "the entry names no keyring item")
        return try keyring.itemEntry(storePath: indexPath, key: key, generation: generation)
    }

    /// The files under the scratch home holding any of `secrets`.
    func filesHolding(_ secrets: [String]) throws -> [String] {
        var found: [String] = []
        let enumerator = FileManager.default.enumerator(atPath: scratch.directory.path)
        while let relative = enumerator?.nextObject() as? String {
            let path = scratch.directory.appendingPathComponent(relative).path
            guard let data = FileManager.default.contents(atPath: path) else { continue }
            let text = String(decoding: data, as: UTF8.self)
            if secrets.contains(where: { text.contains($0) }) { found.append(relative) }
        }
        return found
    }
}
