import Foundation
import Glibc
import Testing
@testable import PortalAuth

/// A sign-in kept in the desktop keyring, used where cron, a systemd service or a CI job runs the tool: no session
/// bus (`env -i PATH=… HOME=… portal-auth status`). The tool says the keyring cannot be reached (exit 70, not 77's
/// "No stored sign-ins"), names the fixes, and `store migrate --to file` makes the sign-in usable there (issue 45);
/// `portal-auth agent` started there with the keyring's bus serves the sign-in to jobs without one (issue 46).
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

    /// Exactly what a crontab's job gets (`env -i`): `HOME`, `PATH`, `LOGNAME`, `SHELL`, and `extra` (nothing of this
    /// process's environment).
    static func cronEnvironment(home: KeyringScratch, _ extra: [String: String] = [:]) -> [String: String] {
        let name = getpwuid(getuid()).map { String(cString: $0.pointee.pw_name) } ?? "root"
        return ["HOME": home.home, "PATH": "/usr/bin:/bin", "LOGNAME": name, "SHELL": "/bin/sh"].merging(extra) { $1 }
    }

    @Test(
        "the agent started from cron (env -i and the keyring's bus, as UnattendedJobs says) serves the keyring's sign-in to token under env -i, and agent stop stops it; without the bus, it answers the tool's own 70"
    )
    func agentFromCron() async throws {
        let home = try await Self.homeWithKeyringSignIn()
        let url = "https://maps.contoso.com/arcgis/rest/services"
        // The tool itself under env -i with the bus named (the fix the tool gives): what the agent must serve.
        let bus = ["DBUS_SESSION_BUS_ADDRESS": home.keyring.busAddress]
        let everything = Array(ProcessInfo.processInfo.environment.keys)
        let direct = try await ToolRunner.run(
            ["token", "--url", url], environment: Self.cronEnvironment(home: home, bus), removing: everything)
        try #require(direct.status == 0, "\(direct)")

        let socket = home.scratch.directory.appendingPathComponent("agent/agent.sock").path
        let job = Self.cronEnvironment(home: home, ["PORTAL_AUTH_AGENT": socket])
        // Without the bus, the agent answers what the tool says without it: the keyring cannot be reached (70).
        let alone = try await ToolRunner.run(
            ["token", "--url", url], environment: Self.cronEnvironment(home: home), removing: everything)
        #expect(alone.status == 70, "\(alone)")
        do {
            let agent = try Self.cronAgent(socket: socket, environment: Self.cronEnvironment(home: home))
            defer { agent.stop() }
            let refused = try await ToolRunner.run(
                ["token", "--url", url], environment: job, removing: everything)
            #expect(refused.status == alone.status, "\(refused)")
            #expect(refused.stderr == alone.stderr, "\(refused)")
        }

        // With the bus, the agent serves the sign-in to a job that has none (only the agent can answer it).
        let agent = try Self.cronAgent(socket: socket, environment: Self.cronEnvironment(home: home, bus))
        defer { agent.stop() }
        let viaAgent = try await ToolRunner.run(
            ["token", "--url", url], environment: job, removing: everything)
        #expect(viaAgent.status == 0, "\(viaAgent)")
        #expect(viaAgent.stdout == direct.stdout && !direct.stdout.isEmpty, "\(viaAgent)")
        let stop = try await ToolRunner.run(
            ["agent", "stop", "--socket", socket], environment: Self.cronEnvironment(home: home), removing: everything)
        #expect(stop.status == 0, "\(stop)")
        agent.process.waitUntilExit()
        #expect(agent.process.terminationStatus == 0, "the agent exits 0 on stop")
    }

    /// `portal-auth agent --socket socket --no-forward` with exactly `environment`, once it serves.
    static func cronAgent(socket: String, environment: [String: String]) throws -> CronAgent {
        let agent = CronAgent(
            tool: try BackgroundTool.start(
                ["agent", "--socket", socket, "--no-forward"], environment: environment, inheriting: false))
        let started = agent.tool.stderr(until: "agent serving on")
        guard started.contains("agent serving on") else {
            agent.stop()
            throw AgentCommandTests.AgentStartFailure(output: started)
        }
        return agent
    }

    /// An agent process, killed when the test leaves it running.
    struct CronAgent {
        let tool: BackgroundTool
        var process: ChildProcess { tool.process }

        func stop() {
            guard process.isRunning else { return }
            // SIGKILL: the child inherits the test process's signal mask, in which SIGTERM may be blocked.
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}
