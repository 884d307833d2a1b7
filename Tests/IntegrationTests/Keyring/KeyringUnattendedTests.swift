import Foundation
import Testing
@testable import PortalAuth

/// A sign-in kept in the desktop keyring, used where cron, a systemd service or a CI job runs the tool: no session
/// bus (`env -i PATH=… HOME=… portal-auth status`). The tool says the keyring cannot be reached (exit 70, not 77's
/// "No stored sign-ins"), names the fixes, and `store migrate --to file` makes the sign-in usable there (issue 45).
@Suite("Keyring sign-ins from cron (env -i)", .serialized)
struct KeyringUnattendedTests {
    /// A scratch home on the shared keyring whose store holds one IAP sign-in (a fixture of `Fixtures/store/`),
    /// moved into the keyring by `store migrate --to keyring`.
    static func homeWithKeyringSignIn() async throws -> KeyringScratch {
        let home = try KeyringScratch.onSharedKeyring()
        try StoreFixture.seed("2026-11-27-issued-at.json", at: home.indexPath)
        let migrated = try await home.run(["store", "migrate", "--to", "keyring"])
        try #require(migrated.status == 0, "\(migrated)")
        try #require(!(try String(contentsOfFile: home.indexPath, encoding: .utf8)).contains("refresh-old"))
        return home
    }

    /// The tool as cron starts it: only `PATH` and `HOME` (no session bus, no `XDG_RUNTIME_DIR`).
    static func cron(_ arguments: [String], home: KeyringScratch) async throws -> ToolRunner.Result {
        try await ToolRunner.run(
            arguments, environment: ["HOME": home.home, "PORTAL_AUTH_STORE": ""],
            removing: ["DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", "XDG_STATE_HOME", "XDG_CACHE_HOME"],
            timeout: .seconds(60))
    }

    @Test(
        "status and token --url without the keyring's bus: exit 70 naming the sign-in and the fixes, never 'No stored sign-ins'",
        arguments: [["status"], ["token", "--url", "https://maps.contoso.com/arcgis/rest/services"]])
    func unreachable(arguments: [String]) async throws {
        let home = try await Self.homeWithKeyringSignIn()
        let result = try await Self.cron(arguments, home: home)
        #expect(result.status == 70, "\(result)")
        #expect(!result.stdout.contains("No stored sign-ins"), "\(result)")
        for fix in [
            "keeps its tokens in the desktop keyring", "iap|https://idp.example/o/authorize|portal-auth-test|alice",
            "DBUS_SESSION_BUS_ADDRESS=unix:path=$XDG_RUNTIME_DIR/bus", "portal-auth store migrate --to file",
            "--store file",
        ] {
            #expect(result.stderr.contains(fix), "missing \(fix): \(result)")
        }
    }

    @Test("after `store migrate --to file` on the desktop, cron's status lists the sign-in (exit 0)")
    func migratedToFile() async throws {
        let home = try await Self.homeWithKeyringSignIn()
        let migrated = try await home.run(["store", "migrate", "--to", "file"])
        #expect(migrated.status == 0, "\(migrated)")
        let result = try await Self.cron(["status", "--format", "json"], home: home)
        #expect(result.status == 0, "\(result)")
        let listed = try JSONValue.parse(Data(result.stdout.utf8))["credentials"]?.arrayValue ?? []
        #expect(listed.count == 1, "\(result)")
    }
}
