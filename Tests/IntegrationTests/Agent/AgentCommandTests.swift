import Foundation
import Glibc
import Testing

@testable import PortalAuth

/// `portal-auth agent` run as users run it, on stores written in the store's format (tokens valid for hours, so no
/// server is needed): the token it hands out is the one `token` prints, a sign-in removed from the store is gone at
/// once, a second agent is turned away, `agent status` and `agent stop`, and another user is refused by the peer check.
@Suite("portal-auth agent", .serialized, .timeLimit(.minutes(3)))
struct AgentCommandTests {
    static let portal = "https://gis.example.com/portal"

    /// An agent serving `store` on a socket in a folder of its own.
    final class RunningAgent {
        let folder: URL
        let socket: String
        let tool: BackgroundTool
        let store: PreparedStore

        init(_ store: PreparedStore, arguments: [String] = []) throws {
            self.store = store
            folder = store.directory.appendingPathComponent("run")
            socket = folder.appendingPathComponent("agent.sock").path
            tool = try BackgroundTool.start(["agent", "--socket", socket] + arguments, environment: store.environment)
            let said = tool.stderr(until: "agent serving on")
            guard said.contains("agent serving on") else {
                stop()
                throw AgentStartFailure(output: said)
            }
        }

        /// The answer to `request`.
        func ask(_ request: AgentRequest) throws -> AgentAnswer {
            try AgentSocket.ask(request, at: socket, timeout: .seconds(20))
        }

        func stop() {
            if tool.process.isRunning {
                kill(tool.process.processIdentifier, SIGTERM)
                tool.process.waitUntilExit()
            }
        }

        deinit { stop() }
    }

    struct AgentStartFailure: Error, CustomStringConvertible {
        let output: String
        var description: String { "the agent did not start: \(output)" }
    }

    @Test(
        "the agent hands out the token `token` prints, with the same facts; a sign-in removed from the store is gone at once"
    )
    func sameTokenAsTheTool() async throws {
        let store = try PreparedStore()
        try await store.write([PreparedStore.portal(Self.portal, token: "stored-token-1")])
        let agent = try RunningAgent(store)
        defer { agent.stop() }

        let direct = try await ToolRunner.run(
            ["token", "--portal", Self.portal, "--format", "json"], environment: store.environment)
        #expect(direct.status == 0, "\(direct)")
        let answer = try agent.ask(
            .token(AgentTokenRequest(selection: .portal(URL(string: Self.portal)!, clientID: nil))))
        guard case .token(let token) = answer else {
            Issue.record("no token: \(answer)")
            return
        }
        let printed = try JSONValue.parse(direct.stdout)
        #expect(token.value == "stored-token-1")
        #expect(printed["token"]?.stringValue == token.value)
        #expect(printed["username"]?.stringValue == token.username)
        #expect(printed["client_id"]?.stringValue == token.clientID)
        #expect(printed["expires_at"]?.stringValue == UTCTimestamp.iso8601(token.expirationDate))
        #expect(token.kind == .oauthUser)

        // Removed by another process: the next request sees it at once, with the failure `token` reports.
        try await store.write([])
        let cli = try await ToolRunner.run(["token", "--portal", Self.portal], environment: store.environment)
        #expect(cli.status == 77, "\(cli)")
        guard
            case .failure(let failure) = try agent.ask(
                .token(AgentTokenRequest(selection: .portal(URL(string: Self.portal)!, clientID: nil))))
        else {
            Issue.record("a removed sign-in still served")
            return
        }
        #expect(failure.reason == .signInNeeded)
        #expect(failure.reason.status == Int(cli.status))
        #expect(cli.stderr.contains(failure.message.components(separatedBy: "\n")[0]), "\(failure.message) vs \(cli)")
        #expect(!failure.message.contains("refresh-"), "no token in a message")
    }

    @Test("a second agent on the same socket exits 64 saying one already serves; status and stop")
    func statusStopAndSecondAgent() async throws {
        let store = try PreparedStore()
        try await store.write([])
        let agent = try RunningAgent(store)
        defer { agent.stop() }

        let second = try await ToolRunner.run(["agent", "--socket", agent.socket], environment: store.environment)
        #expect(second.status == 64, "\(second)")
        #expect(second.stderr.contains("an agent already serves on \(agent.socket)"), "\(second)")

        let status = try await ToolRunner.run(["agent", "status", "--socket", agent.socket, "--format", "json"])
        #expect(status.status == 0, "\(status)")
        let object = try JSONValue.parse(status.stdout)
        #expect(object["pid"]?.integerValue == Int64(agent.tool.process.processIdentifier))
        #expect(object["protocol"]?.integerValue == 1)

        let stop = try await ToolRunner.run(["agent", "stop", "--socket", agent.socket])
        #expect(stop.status == 0, "\(stop)")
        agent.tool.process.waitUntilExit()
        #expect(agent.tool.process.terminationStatus == 0)
        #expect(access(agent.socket, F_OK) != 0, "the socket was removed")
        let after = try await ToolRunner.run(["agent", "status", "--socket", agent.socket])
        #expect(after.status == 69, "\(after)")
        #expect(after.stderr.contains("no agent answers on"), "\(after)")
    }

    @Test(
        "another user (nobody) reaching the socket is refused by its peer credentials",
        .enabled(if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")))
    func otherUserRefused() async throws {
        let store = try PreparedStore()
        try await store.write([PreparedStore.portal(Self.portal, token: "stored-token-2")])
        let agent = try RunningAgent(store)
        defer { agent.stop() }
        // Open the way on purpose, so that only the peer check stands between nobody and the agent.
        for folder in [store.directory.path, agent.folder.path] { chmod(folder, 0o755) }
        chmod(agent.socket, 0o666)
        let client = """
            import socket, sys
            s = socket.socket(socket.AF_UNIX)
            s.settimeout(20)
            s.connect(sys.argv[1])
            # The agent answers another user on accepting, before any request (one sent could meet the closed end).
            print(s.makefile().readline().strip())
            """
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = [
            "--reuid=nobody", "--regid=nogroup", "--clear-groups", "/usr/bin/python3", "-c", client, agent.socket,
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = readOutput(of: output, until: "\n")
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text)")
        guard case .failure(let failure)? = AgentAnswer.parse(text.trimmingCharacters(in: .whitespacesAndNewlines))
        else {
            Issue.record("nobody got \(text)")
            return
        }
        #expect(failure.reason == .forbidden)
        #expect(!text.contains("stored-token-2"))
    }
    // MARK: - token and exec through the agent

    /// `environment` pointing the tool at the agent, with a store of its own that holds nothing: whatever token it
    /// prints came from the agent.
    static func throughAgent(_ agent: RunningAgent, empty: PreparedStore) -> [String: String] {
        empty.environment.merging(["PORTAL_AUTH_AGENT": agent.socket]) { $1 }
    }

    @Test(
        "token (plain, header, json) and exec: the same output and exit status through the agent as from the store",
        arguments: [
            ["token"], ["token", "--format", "header"], ["token", "--format", "json"], ["token", "--min-valid", "60"],
        ])
    func sameOutputThroughTheAgent(_ arguments: [String]) async throws {
        let store = try PreparedStore()
        try await store.write([PreparedStore.portal(Self.portal, token: "stored-token-3")])
        let empty = try PreparedStore()
        try await empty.write([])
        let agent = try RunningAgent(store)
        defer { agent.stop() }
        let direct = try await ToolRunner.run(arguments, environment: store.environment)
        let viaAgent = try await ToolRunner.run(arguments, environment: Self.throughAgent(agent, empty: empty))
        #expect(direct.status == 0, "\(direct)")
        #expect(viaAgent.status == direct.status, "\(viaAgent)")
        #expect(viaAgent.stderr == direct.stderr)
        if arguments.contains("json") {
            var (one, two) = (try JSONValue.parse(direct.stdout), try JSONValue.parse(viaAgent.stdout))
            guard case .object(var first) = one, case .object(var second) = two else {
                Issue.record("not JSON objects: \(direct) \(viaAgent)")
                return
            }
            // Whole seconds left: the two runs may straddle a second.
            #expect(abs((first["expires_in"]?.integerValue ?? 0) - (second["expires_in"]?.integerValue ?? 99)) <= 2)
            first["expires_in"] = nil
            second["expires_in"] = nil
            (one, two) = (.object(first), .object(second))
            #expect(one == two, "\(direct.stdout) vs \(viaAgent.stdout)")
        } else {
            #expect(viaAgent.stdout == direct.stdout, "\(viaAgent)")
        }
        let script = ["exec", "--", "/bin/sh", "-c", "echo \"$PORTAL_AUTH_TOKEN $ARCGIS_TOKEN\""]
        let execDirect = try await ToolRunner.run(script, environment: store.environment)
        let execAgent = try await ToolRunner.run(script, environment: Self.throughAgent(agent, empty: empty))
        #expect(execDirect.status == 0, "\(execDirect)")
        #expect(execAgent.stdout == execDirect.stdout, "\(execAgent)")
        #expect(execAgent.stdout.contains("stored-token-3"))
    }

    @Test("nothing stored: the same message and exit 77 through the agent; no agent listening: the store is read")
    func failuresAndFallback() async throws {
        let store = try PreparedStore()
        try await store.write([PreparedStore.portal(Self.portal, token: "stored-token-4")])
        let empty = try PreparedStore()
        try await empty.write([])
        let agent = try RunningAgent(empty)
        defer { agent.stop() }
        let arguments = ["token", "--portal", Self.portal]
        let direct = try await ToolRunner.run(arguments, environment: empty.environment)
        let viaAgent = try await ToolRunner.run(arguments, environment: Self.throughAgent(agent, empty: store))
        #expect(direct.status == 77, "\(direct)")
        #expect(viaAgent.status == 77, "the agent's store, empty, is the one used: \(viaAgent)")
        #expect(viaAgent.stderr == direct.stderr)
        #expect(viaAgent.stdout.isEmpty)
        let idToken = try await ToolRunner.run(
            ["token", "--id-token"], environment: Self.throughAgent(agent, empty: store))
        #expect(idToken.status == 77, "nothing stored in the agent's store: \(idToken)")

        // An agent named but not listening: the tool reads its store.
        let gone = store.environment.merging([
            "PORTAL_AUTH_AGENT": agent.folder.appendingPathComponent("none.sock").path
        ]) { $1 }
        let fallback = try await ToolRunner.run(arguments, environment: gone)
        #expect(fallback.status == 0, "\(fallback)")
        #expect(fallback.stdout == "stored-token-4\n")
    }

    // MARK: - The documented Python client

    /// The Python client of the protocol article, as it is printed there.
    static func documentedPythonClient() throws -> String {
        var directory = URL(fileURLWithPath: #filePath)
        while directory.path != "/"
            && !FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path)
        {
            directory.deleteLastPathComponent()
        }
        let article = try String(
            contentsOf: directory.appendingPathComponent("Sources/PortalAuth/PortalAuth.docc/AgentProtocol.md"),
            encoding: .utf8)
        guard let start = article.range(of: "```python\nimport json"),
            let end = article.range(of: "```", range: start.upperBound..<article.endIndex)
        else { throw AgentStartFailure(output: "no Python client in AgentProtocol.md") }
        return String(article[article.index(start.lowerBound, offsetBy: 10)..<end.lowerBound])
    }

    @Test(
        "the Python client of the documentation (standard library only) gets the token, and the failure's reason",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")))
    func pythonClient() async throws {
        let store = try PreparedStore()
        try await store.write([PreparedStore.portal(Self.portal, token: "stored-token-5")])
        let agent = try RunningAgent(store)
        defer { agent.stop() }
        let client =
            try Self.documentedPythonClient() + """
                import sys
                print(agent_token({"portal": sys.argv[1]}, min_valid=60))
                try:
                    agent_token({"name": "nobody-here"})
                except RuntimeError as error:
                    print(error)
                """
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-I", "-c", client, Self.portal]
        process.environment = ["PORTAL_AUTH_AGENT": agent.socket, "PATH": "/usr/bin:/bin"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text =
            readOutput(of: output, until: "\n", timeout: .seconds(30))
            + readOutput(of: output, until: "\n", timeout: .seconds(30))
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text)")
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.first == "stored-token-5", "\(text)")
        #expect(lines.count == 2 && lines[1].hasPrefix("usage (exit status 64): "), "\(text)")
    }
    // MARK: - Socket activation

    @Test(
        "started by socket activation (systemd-socket-activate, as the user units do), the agent serves the socket handed over",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-socket-activate")))
    func socketActivation() async throws {
        let store = try PreparedStore()
        try await store.write([PreparedStore.portal(Self.portal, token: "stored-token-6")])
        let folder = store.directory.appendingPathComponent("activated")
        try FileManager.default.createDirectory(
            at: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let socket = folder.appendingPathComponent("agent.sock").path
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/systemd-socket-activate")
        // It hands the program only the variables named with -E (as a unit's Environment= does).
        process.arguments = [
            "-l", socket, "-E", "PORTAL_AUTH_STORE=\(store.path)", BinaryLocator.toolPath, "agent", "--socket", socket,
        ]
        process.environment = ProcessInfo.processInfo.environment.merging(store.environment) { $1 }
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        defer {
            if process.isRunning {
                kill(process.processIdentifier, SIGTERM)
                process.waitUntilExit()
            }
        }
        let said = readOutput(of: errors, until: "Listening on")
        #expect(said.contains("Listening on"), "\(said)")
        // The first connection starts the agent in systemd-socket-activate's place, on the socket it made.
        let answer = try AgentSocket.ask(
            .token(AgentTokenRequest(selection: .portal(URL(string: Self.portal)!, clientID: nil))), at: socket,
            timeout: .seconds(30))
        guard case .token(let token) = answer else {
            Issue.record("no token: \(answer)")
            return
        }
        #expect(token.value == "stored-token-6")
        let status = try await ToolRunner.run(["agent", "status", "--socket", socket, "--format", "json"])
        #expect(try JSONValue.parse(status.stdout)["pid"]?.integerValue == Int64(process.processIdentifier))
        let stop = try await ToolRunner.run(["agent", "stop", "--socket", socket])
        #expect(stop.status == 0, "\(stop)")
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }
}
