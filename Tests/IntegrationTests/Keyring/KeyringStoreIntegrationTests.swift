import Foundation
import Testing
@testable import PortalAuth

/// The built tool with its tokens in a real desktop keyring (gnome-keyring-daemon on a private session bus, see
/// `scripts/keyring`) and the real test server and browser.
@Suite("Keyring store (gnome-keyring)", .serialized, .enabled(if: TestServer.isConfigured))
struct KeyringStoreIntegrationTests {
    let server: TestServer
    let control: TestControl

    init() async throws {
        server = try TestServer.current()
        control = try await TestControl.prepared()
    }

    @Test(
        "a sign-in keeps its tokens in the keyring: no token in any file of the home and state folders; status says so")
    func noTokenOnDisk() async throws {
        let home = try KeyringScratch.onSharedKeyring()
        let signedIn = try await home.signIn(.iap, server: server)
        // The sign-in says where the tokens went, as status does (issue 28, point 10).
        #expect(signedIn.stderr.contains("Stored in the desktop keyring (index: "), "\(signedIn)")

        let item = try home.itemEntry(.iap)
        let tokens = try ["access_token", "refresh_token", "id_token"].map { try #require(item[$0]?.stringValue) }
        #expect(try home.filesHolding(tokens).isEmpty, "token values found in files")
        #expect(try home.indexEntry(.iap).value["access_token"] == nil)

        let status = try await home.run(["status", "--format", "json"])
        #expect(status.status == 0, "\(status)")
        #expect(try JSONValue.parse(Data(status.stdout.utf8))["secrets_in"]?.stringValue == "keyring")
        let token = try await home.run(["token", "--iap", server.iapConfig])
        #expect(token.status == 0, "\(token)")
        #expect(token.stdout == tokens[0] + "\n")
        #expect(try home.filesHolding(tokens).isEmpty)
    }

    @Test(
        "16 concurrent `token` processes on an expired token with rotating refresh tokens: one refresh, one token, one item"
    )
    func concurrentProcesses() async throws {
        let home = try KeyringScratch.onSharedKeyring()
        // A 1-second access token, waited out (by `status`): the next `token` refreshes it, whatever the rule for
        // tokens shorter than --min-valid.
        try await control.configure(["access_token_seconds": .integer(1)])
        try await home.signIn(.iap, server: server)
        try await control.resetConfiguration()
        let giveUp = Date().addingTimeInterval(60)
        while true {
            let status = try await home.run(["status", "--format", "json"])
            let valid = try JSONValue.parse(Data(status.stdout.utf8))["credentials"]?.arrayValue?.first?[
                "access_token_valid"]?.boolValue
            if valid == false { break }
            try #require(Date() < giveUp, "the 1-second access token did not expire within a minute: \(status)")
            try await Task.sleep(for: .milliseconds(200))
        }
        try await control.configure(["token_delay_ms": .integer(400)])
        try await control.resetStats()

        let runs = try await ParallelRuns.run(
            16, arguments: ["token", "--iap", server.iapConfig], environment: home.environment)
        try await control.resetConfiguration()
        let stats = try await control.stats()
        #expect(runs.allSatisfy { $0.status == 0 }, "\(runs.filter { $0.status != 0 })")
        #expect(stats.refreshes == 1, "\(stats.byGrant)")
        let tokens = Set(runs.map(\.stdout))
        #expect(tokens.count == 1)
        #expect(tokens.first == (try home.itemEntry(.iap)["access_token"]?.stringValue ?? "") + "\n")
        #expect(try home.keyring.items(storePath: home.indexPath).count == 1, "the old item is removed")
    }

    @Test("kill -9 at moments of a refresh: the index stays valid, the sign-in works, and leftovers are removed")
    func killedMidRefresh() async throws {
        let home = try KeyringScratch.onSharedKeyring()
        try await home.signIn(.portal, server: server)
        try await control.configure(["token_delay_ms": .integer(300)])
        // Kills before, during and after the token request (the answer then being stored).
        for delay in [0, 60, 150, 250, 350, 450, 600] {
            let process = ChildProcess()
            process.executableURL = URL(fileURLWithPath: BinaryLocator.toolPath)
            // `refresh` refreshes whatever the token's age (a `token --min-valid` beyond its lifetime would not, while the
            // token is in the first half of its lifetime).
            process.arguments = ["refresh", "--portal", server.portal, "--client-id", server.clientID]
            process.environment = ProcessInfo.processInfo.environment.merging(home.environment) { $1 }
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            try await Task.sleep(for: .milliseconds(delay))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()

            #expect(try home.indexEntry(.portal).value["keyring"] != nil, "after a kill at \(delay) ms")
            let token = try await home.run(["token", "--portal", server.portal, "--client-id", server.clientID])
            #expect(token.status == 0, "after a kill at \(delay) ms: \(token)")
        }
        try await control.resetConfiguration()
        let refresh = try await home.run(["refresh", "--portal", server.portal, "--client-id", server.clientID])
        #expect(refresh.status == 0, "\(refresh)")
        #expect(try home.keyring.items(storePath: home.indexPath).count == 1, "one item after the next write")
    }

    @Test("store migrate --to file and --to keyring keep the sign-in; revoke deletes the item")
    func migrateAndRevoke() async throws {
        let home = try KeyringScratch.onSharedKeyring()
        try await home.signIn(.portal, server: server)
        let selector = ["--portal", server.portal, "--client-id", server.clientID]

        let toFile = try await home.run(["store", "migrate", "--to", "file"])
        #expect(toFile.status == 0, "\(toFile)")
        #expect(try home.indexEntry(.portal).value["access_token"]?.stringValue != nil)
        #expect(try home.keyring.items(storePath: home.indexPath).isEmpty)
        let statusFile = try await home.run(["status", "--format", "json"])
        #expect(
            try JSONValue.parse(Data(statusFile.stdout.utf8))["secrets_in"]?.stringValue == "file",
            "the recorded choice is followed")
        #expect(try await home.run(["token"] + selector).status == 0)

        let toKeyring = try await home.run(["store", "migrate", "--to", "keyring"])
        #expect(toKeyring.status == 0, "\(toKeyring)")
        #expect(try home.indexEntry(.portal).value["access_token"] == nil)
        #expect(try home.keyring.items(storePath: home.indexPath).count == 1)
        let token = try await home.run(["token"] + selector)
        #expect(token.status == 0, "\(token)")
        #expect(try home.filesHolding([token.stdout.trimmingCharacters(in: .newlines)]).isEmpty)

        let revoke = try await home.run(["revoke"] + selector)
        #expect(revoke.status == 0, "\(revoke)")
        #expect(try home.keyring.items(storePath: home.indexPath).isEmpty, "revoke deletes the item")
    }

    @Test(
        "no session bus, or a bus without a Secret Service: auto uses the file and says why; --store keyring fails at once (exit 70)",
        arguments: [false, true])
    func noSecretService(withBus: Bool) async throws {
        let bus = withBus ? try KeyringSession(busOnly: true) : nil
        let scratch = try ScratchStore()
        let environment = [
            "HOME": scratch.directory.path, "XDG_STATE_HOME": scratch.directory.appendingPathComponent("state").path,
            "DBUS_SESSION_BUS_ADDRESS": bus?.busAddress ?? "", "XDG_RUNTIME_DIR": scratch.directory.path,
            "PORTAL_AUTH_STORE": "",
        ]
        let reason = withBus ? "no Secret Service is running" : "no D-Bus session bus"

        let status = try await ToolRunner.run(["status", "--format", "json"], environment: environment)
        #expect(status.status == 77, "nothing usable is stored: \(status)")
        let json = try JSONValue.parse(Data(status.stdout.utf8))
        #expect(json["secrets_in"]?.stringValue == "file")
        #expect(json["secrets_in_reason"]?.stringValue?.contains(reason) == true, "\(status)")

        let forced = try await ToolRunner.run(
            ["status", "--store", "keyring"], environment: environment, timeout: .seconds(60))
        #expect(!forced.timedOut)
        #expect(forced.status == 70, "\(forced)")
        #expect(forced.stderr.contains(reason) && forced.stderr.contains("--store file"), "\(forced)")
        let viaEnvironment = try await ToolRunner.run(
            ["status"], environment: environment.merging(["PORTAL_AUTH_STORE": "keyring"]) { $1 })
        #expect(viaEnvironment.status == 70, "\(viaEnvironment)")
    }

    @Test(
        "a locked keyring: a sign-in kept there is reported unreachable with why and the fixes (exit 70); --store keyring fails at once (exit 70)"
    )
    func lockedCollection() async throws {
        let home = try KeyringScratch.onPrivateKeyring()
        let keyring = home.keyring
        try await home.signIn(.portal, server: server)
        try keyring.lock()
        // Issue 45: a sign-in whose tokens are in a keyring that cannot be reached is a local problem (exit 70), not
        // "nothing stored" (77); the message names the sign-in, why, and the fixes.
        let status = try await home.run(["status"])
        #expect(status.status == 70, "the only sign-in cannot be read now: \(status)")
        #expect(
            status.stderr.contains("cannot be reached now") && status.stderr.contains("locked")
                && status.stderr.contains("store migrate --to file"), "\(status)")
        let token = try await home.run(["token", "--portal", server.portal, "--client-id", server.clientID])
        #expect(token.status == 70, "\(token)")
        #expect(token.stderr.contains("cannot be reached now") && token.stderr.contains("locked"), "\(token)")
        #expect(try home.indexEntry(.portal).value["keyring"] != nil, "the sign-in stays in the keyring")
        let forced = try await home.run(["status", "--store", "keyring"])
        #expect(!forced.timedOut)
        #expect(forced.status == 70, "\(forced)")
        #expect(forced.stderr.contains("locked") && forced.stderr.contains("unlock the keyring"), "\(forced)")
    }
}
