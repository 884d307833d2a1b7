import Foundation
import Glibc
import Testing

@testable import PortalAuth

/// The agent's forwarding socket as users use it: over a real `ssh -R` StreamLocal forward to an OpenSSH server
/// started here on loopback (its own host key and configuration, a test key, a second local user as the remote
/// user), a token of the laptop's sign-in on the remote side with nothing stored there; and its refusals: a sign-in
/// not marked, a confirmation command missing or too slow, no way to confirm, `stop` from the forwarding socket.
@Suite("portal-auth agent: forwarding over SSH", .serialized, .timeLimit(.minutes(3)))
struct AgentForwardingTests {
    static let portal = "https://gis.example.com/portal"
    static let remoteUser = "portal-auth-ssh-test"

    /// A store with one sign-in to `portal` named `work`, and a folder for the agent's sockets and the test's files.
    final class Laptop: Sendable {
        let store: PreparedStore
        let folder: URL
        var socket: String { folder.appendingPathComponent("run/agent.sock").path }
        var forwardSocket: String { folder.appendingPathComponent("run/agent-forward.sock").path }

        init(token: String, mark: Bool, portal: String = AgentForwardingTests.portal) async throws {
            store = try PreparedStore()
            folder = store.directory
            try await store.write([PreparedStore.portal(portal, token: token)])
            let named = try await ToolRunner.run(["name", "work", "--portal", portal], environment: store.environment)
            #expect(named.status == 0, "\(named)")
            if mark {
                let marked = try await ToolRunner.run(
                    ["agent", "forward", "allow", "work"], environment: store.environment)
                #expect(marked.status == 0, "\(marked)")
            }
        }

        /// An executable script in the folder.
        func script(_ name: String, _ body: String) throws -> String {
            let path = folder.appendingPathComponent(name).path
            try Data("#!/bin/sh\n\(body)\n".utf8).write(to: URL(fileURLWithPath: path))
            chmod(path, 0o755)
            return path
        }

        /// The agent on this store (PORTAL_AUTH_CONFIRM removed: only `arguments` say how to confirm).
        func agent(_ arguments: [String]) throws -> BackgroundTool {
            var environment = ProcessInfo.processInfo.environment.merging(store.environment) { $1 }
            environment["PORTAL_AUTH_CONFIRM"] = nil
            let process = ChildProcess()
            process.executableURL = URL(fileURLWithPath: BinaryLocator.toolPath)
            process.arguments = ["agent", "--socket", socket] + arguments
            process.environment = environment
            process.standardInput = nil
            process.standardOutput = nil
            let errors = Pipe()
            process.standardError = errors
            try process.run()
            let tool = BackgroundTool(process: process, errors: errors)
            let said = tool.stderr(until: "agent serving on")
            guard said.contains("agent serving on") else {
                stop(tool)
                throw Problem("the agent did not start: \(said)")
            }
            return tool
        }

        func stop(_ tool: BackgroundTool) {
            guard tool.process.isRunning else { return }
            kill(tool.process.processIdentifier, SIGTERM)
            tool.process.waitUntilExit()
        }

        /// `portal-auth token --url` through the forwarding socket, as a remote machine's request arrives.
        func forwardedToken() async throws -> ToolRunner.Result {
            try await ToolRunner.run(
                ["token", "--url", "\(AgentForwardingTests.portal)/sharing/rest/portals/self"],
                environment: ["PORTAL_AUTH_AGENT": forwardSocket, "PORTAL_AUTH_STORE": "/nonexistent/store.json"])
        }
    }

    struct Problem: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    // MARK: - Refusals on the forwarding socket

    @Test(
        "a sign-in not marked is refused (77) saying how to mark it; marked, it is served; stop from the forwarding socket is refused; status shows the counts"
    )
    func markedOnlyAndNoStop() async throws {
        let laptop = try await Laptop(token: "stored-token-f1", mark: false)
        let agent = try laptop.agent(["--no-confirm"])
        defer { laptop.stop(agent) }
        var info = stat()
        #expect(
            stat(laptop.forwardSocket, &info) == 0 && info.st_mode & 0o777 == 0o600, "the forwarding socket is 0600")

        let refused = try await laptop.forwardedToken()
        #expect(refused.status == 77, "\(refused)")
        #expect(refused.stdout.isEmpty)
        #expect(refused.stderr.contains("no sign-in marked for forwarding matches this request"), "\(refused)")
        #expect(refused.stderr.contains("portal-auth agent forward allow NAME"), "\(refused)")
        #expect(!refused.stderr.contains("stored-token-f1"))

        // A name not known is answered the same: the remote learns no name of the agent's.
        let unknownName = try await ToolRunner.run(
            ["token", "--name", "nobody-here"],
            environment: ["PORTAL_AUTH_AGENT": laptop.forwardSocket, "PORTAL_AUTH_STORE": "/nonexistent/store.json"])
        #expect(unknownName.status == 77, "\(unknownName)")
        #expect(unknownName.stderr.contains("no sign-in marked for forwarding"), "\(unknownName)")
        #expect(!unknownName.stderr.contains("work"), "\(unknownName)")

        let unknown = try await ToolRunner.run(
            ["agent", "forward", "allow", "nobody-here"], environment: laptop.store.environment)
        #expect(unknown.status == 64, "\(unknown)")
        #expect(unknown.stderr.contains("nobody-here"), "\(unknown)")
        let allow = try await ToolRunner.run(
            ["agent", "forward", "allow", "work"], environment: laptop.store.environment)
        #expect(allow.status == 0, "\(allow)")
        let list = try await ToolRunner.run(["agent", "forward", "list"], environment: laptop.store.environment)
        #expect(list.stdout == "work\n", "\(list)")
        let served = try await laptop.forwardedToken()
        #expect(served.status == 0, "\(served)")
        #expect(served.stdout == "stored-token-f1\n")

        let stop = try await ToolRunner.run(["agent", "stop", "--socket", laptop.forwardSocket])
        #expect(stop.status == 77, "\(stop)")
        #expect(stop.stderr.contains("not served on the agent's forwarding socket"), "\(stop)")
        #expect(agent.process.isRunning)

        let status = try await ToolRunner.run(["agent", "status", "--socket", laptop.socket, "--format", "json"])
        let forward = try JSONValue.parse(status.stdout)["forward"]
        #expect(forward?["socket"]?.stringValue == laptop.forwardSocket, "\(status)")
        #expect(forward?["allowed"]?.integerValue == 1)
        #expect(forward?["refused_not_marked"]?.integerValue == 2)
        let text = try await ToolRunner.run(["agent", "status", "--socket", laptop.socket])
        #expect(text.stdout.contains("Forwarding socket (for ssh -R): \(laptop.forwardSocket), without confirmation."))
        let remoteStatus = try await ToolRunner.run(
            ["agent", "status", "--socket", laptop.forwardSocket, "--format", "json"])
        #expect(try JSONValue.parse(remoteStatus.stdout)["pid"] == nil, "no process facts to a remote: \(remoteStatus)")

        // A second agent on another socket of the same folder would share the forwarding socket: it is told so.
        let secondSocket = laptop.folder.appendingPathComponent("run/second.sock").path
        let second = try await ToolRunner.run(
            ["agent", "--socket", secondSocket, "--no-confirm"], environment: laptop.store.environment)
        #expect(second.status == 64, "\(second)")
        #expect(second.stderr.contains("another agent serves the forwarding socket"), "\(second)")
        #expect(second.stderr.contains("--forward-socket PATH or --no-forward"), "\(second)")
        #expect(access(secondSocket, F_OK) != 0, "its own socket is removed")

        let deny = try await ToolRunner.run(
            ["agent", "forward", "deny", "work"], environment: laptop.store.environment)
        #expect(deny.status == 0, "\(deny)")
        #expect(try await laptop.forwardedToken().status == 77, "refused again at once")
    }

    @Test(
        "confirmation: a missing command, one that does not answer in time, and no command with no terminal are each refused (77) saying why"
    )
    func confirmationRefusals() async throws {
        let laptop = try await Laptop(token: "stored-token-f2", mark: true)
        let cases: [(arguments: [String], says: String)] = [
            (["--confirm-command", laptop.folder.appendingPathComponent("missing").path], "is not an executable file"),
            (
                ["--confirm-command", try laptop.script("slow", "exec sleep 60"), "--confirm-timeout", "1"],
                "no answer came within 1 seconds"
            ),
            ([], "no confirmation program is set (--confirm-command or PORTAL_AUTH_CONFIRM)"),
            (["--confirm-command", try laptop.script("no", "exit 1")], "did not allow process portal-auth"),
        ]
        for (arguments, says) in cases {
            let agent = try laptop.agent(arguments)
            defer { laptop.stop(agent) }
            let refused = try await laptop.forwardedToken()
            #expect(refused.status == 77, "\(arguments): \(refused)")
            #expect(refused.stderr.contains(says), "\(arguments): \(refused)")
            #expect(refused.stdout.isEmpty)
        }
        let agent = try laptop.agent(["--no-forward"])
        defer { laptop.stop(agent) }
        #expect(access(laptop.forwardSocket, F_OK) != 0, "--no-forward opens no forwarding socket")
        let status = try await ToolRunner.run(["agent", "status", "--socket", laptop.socket])
        #expect(status.stdout.contains("No forwarding socket (--no-forward)."), "\(status)")
    }

    @Test(
        "with no confirmation program, the agent asks on its terminal: y allows, n refuses",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "needs script (util-linux)"))
    func terminalConfirmation() async throws {
        let laptop = try await Laptop(token: "stored-token-f4", mark: true)
        // script(1) gives the agent a terminal (a pseudo-terminal), whose keyboard is this pipe.
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        let command = [BinaryLocator.toolPath, "agent", "--socket", laptop.socket, "--confirm-remember", "0"]
        process.arguments = ["-q", "-e", "-c", command.joined(separator: " "), "/dev/null"]
        var environment = ProcessInfo.processInfo.environment.merging(laptop.store.environment) { $1 }
        environment["PORTAL_AUTH_CONFIRM"] = nil
        process.environment = environment
        let keyboard = Pipe()
        let screen = Pipe()
        process.standardInput = keyboard
        process.standardOutput = screen
        process.standardError = nil
        try process.run()
        defer {
            if process.isRunning {
                kill(process.processIdentifier, SIGTERM)
                process.waitUntilExit()
            }
        }
        let started = readOutput(of: screen, until: "agent serving on")
        #expect(started.contains("agent serving on"), "\(started)")
        for (key, status) in [("y", Int32(0)), ("n", Int32(77))] {
            async let asked = laptop.forwardedToken()
            let prompt = readOutput(of: screen, until: "[y/N] ")
            #expect(prompt.contains("allow process portal-auth to have a token of the sign-in work"), "\(prompt)")
            keyboard.fileHandleForWriting.write(Data("\(key)\n".utf8))
            let result = try await asked
            #expect(result.status == status, "\(key): \(result)")
            #expect(result.stdout == (status == 0 ? "stored-token-f4\n" : ""), "\(key): \(result)")
        }
        let stop = try await ToolRunner.run(["agent", "stop", "--socket", laptop.socket])
        #expect(stop.status == 0, "\(stop)")
    }

    // MARK: - Over SSH

    /// An OpenSSH server on 127.0.0.1 (an ephemeral port), run from a folder of its own with its own host key and
    /// configuration, accepting the test key for `AgentForwardingTests.remoteUser` only.
    final class SSHServer {
        let folder: URL
        let port: Int
        let process: ChildProcess
        var key: String { folder.appendingPathComponent("client_key").path }
        var knownHosts: String { folder.appendingPathComponent("known_hosts").path }

        init(folder: URL) throws {
            self.folder = folder
            let keygen = "/usr/bin/ssh-keygen"
            for name in ["host_key", "client_key"] {
                try AgentForwardingTests.run(
                    keygen, ["-q", "-t", "ed25519", "-N", "", "-f", folder.appendingPathComponent(name).path])
            }
            try FileManager.default.copyItem(
                atPath: folder.appendingPathComponent("client_key.pub").path,
                toPath: folder.appendingPathComponent("authorized_keys").path)
            chmod(folder.appendingPathComponent("authorized_keys").path, 0o644)
            port = try AgentForwardingTests.freePort()
            let hostKey = try String(contentsOf: folder.appendingPathComponent("host_key.pub"), encoding: .utf8)
                .split(separator: " ").prefix(2).joined(separator: " ")
            try Data("[127.0.0.1]:\(port) \(hostKey)\n".utf8).write(
                to: folder.appendingPathComponent("known_hosts"))
            let config = """
                ListenAddress 127.0.0.1:\(port)
                HostKey \(folder.path)/host_key
                PidFile none
                AuthorizedKeysFile \(folder.path)/authorized_keys
                AllowUsers \(AgentForwardingTests.remoteUser)
                UsePAM no
                PasswordAuthentication no
                KbdInteractiveAuthentication no
                PubkeyAuthentication yes
                AllowStreamLocalForwarding yes
                StreamLocalBindUnlink yes
                StrictModes no
                PermitUserEnvironment no
                LogLevel VERBOSE
                """
            let configPath = folder.appendingPathComponent("sshd_config").path
            try Data((config + "\n").utf8).write(to: URL(fileURLWithPath: configPath))
            // sshd's privilege separation folder (made by the service's unit, which is never used here).
            mkdir("/run/sshd", 0o755)
            process = ChildProcess()
            process.executableURL = URL(fileURLWithPath: "/usr/sbin/sshd")
            process.arguments = ["-D", "-e", "-f", configPath]
            process.environment = ["PATH": "/usr/sbin:/usr/bin:/bin"]
            process.standardInput = nil
            process.standardOutput = nil
            let errors = Pipe()
            process.standardError = errors
            try process.run()
            let said = readOutput(of: errors, until: "Server listening on")
            guard said.contains("Server listening on") else {
                stop()
                throw Problem("sshd did not start: \(said)")
            }
        }

        /// `ssh` to the remote user, forwarding `remoteSocket` there to `localSocket` here, running `command`.
        func run(_ command: String, forwarding remoteSocket: String, to localSocket: String) async throws
            -> ToolRunner.Result
        {
            try await ToolRunner.run(
                [
                    "-F", "/dev/null", "-i", key, "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes",
                    "-o", "UserKnownHostsFile=\(knownHosts)", "-o", "GlobalKnownHostsFile=/dev/null",
                    "-o", "StreamLocalBindUnlink=yes", "-o", "ExitOnForwardFailure=yes", "-o", "LogLevel=ERROR",
                    "-R", "\(remoteSocket):\(localSocket)", "-p", "\(port)",
                    "\(AgentForwardingTests.remoteUser)@127.0.0.1", command,
                ], removing: ["SSH_AUTH_SOCK"], timeout: .seconds(60), executable: "/usr/bin/ssh")
        }

        func stop() {
            guard process.isRunning else { return }
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }

        deinit { stop() }
    }

    static let sshAvailable =
        geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/sshd")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/ssh")
        && FileManager.default.isExecutableFile(atPath: "/usr/sbin/useradd")

    @Test(
        "over ssh -R: on the remote side PORTAL_AUTH_AGENT=… token, exec and request get the laptop's token, confirmed once, with nothing written in the remote home",
        .enabled(
            if: sshAvailable && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"),
            "needs root (a second local user as the remote user), /usr/sbin/sshd (openssh-server), /usr/bin/ssh and python3"
        ))
    func overSSH() async throws {
        let home = try Self.ensureRemoteUser()
        // The laptop's sign-in is to a loopback server that echoes the token it gets (for `request`).
        let echoFolder = try ScratchStore()
        let echo = try EchoServer(folder: echoFolder.directory)
        defer { echo.stop() }
        let laptop = try await Laptop(token: "stored-token-f3", mark: true, portal: echo.portal)
        chmod(laptop.folder.path, 0o755)
        let prompts = laptop.folder.appendingPathComponent("prompts").path
        let confirm = try laptop.script("confirm", "printf '%s\\n' \"$1\" >> '\(prompts)'\nexit 0")
        let agent = try laptop.agent(["--confirm-command", confirm])
        defer { laptop.stop(agent) }
        // The remote side: the tool where the remote user can run it, and a shared (not private) folder for the
        // forwarded socket, as /tmp would be.
        let remote = laptop.folder.appendingPathComponent("remote")
        try FileManager.default.createDirectory(at: remote, withIntermediateDirectories: false)
        chmod(remote.path, 0o1777)
        let tool = laptop.folder.appendingPathComponent("portal-auth").path
        try FileManager.default.copyItem(atPath: BinaryLocator.toolPath, toPath: tool)
        chmod(tool, 0o755)
        let remoteSocket = remote.appendingPathComponent("agent.sock").path
        let server = try SSHServer(folder: laptop.folder.appendingPathComponent("sshd", isDirectory: true).creating())
        defer { server.stop() }
        let before = try Self.listing(home)

        let url = "\(echo.portal)/sharing/rest/portals/self"
        let token = try await server.run(
            "PORTAL_AUTH_AGENT=\(remoteSocket) \(tool) token --url \(url)", forwarding: remoteSocket,
            to: laptop.forwardSocket)
        #expect(token.status == 0, "\(token)")
        #expect(token.stdout == "stored-token-f3\n", "\(token)")
        let exec = try await server.run(
            "PORTAL_AUTH_AGENT=\(remoteSocket) \(tool) exec --url \(url) -- /bin/sh -c 'echo \"$PORTAL_AUTH_TOKEN\"'",
            forwarding: remoteSocket, to: laptop.forwardSocket)
        #expect(exec.status == 0, "\(exec)")
        #expect(exec.stdout == "stored-token-f3\n", "\(exec)")
        // request: the server saw the laptop's token, and the output is the laptop's own run's.
        let request = try await server.run(
            "PORTAL_AUTH_AGENT=\(remoteSocket) \(tool) request '\(url)?f=json'", forwarding: remoteSocket,
            to: laptop.forwardSocket)
        let onLaptop = try await ToolRunner.run(["request", "\(url)?f=json"], environment: laptop.store.environment)
        #expect(request.status == 0, "\(request)")
        #expect(request.stdout.contains("stored-token-f3"), "the server got the laptop's token: \(request)")
        #expect(onLaptop.status == 0, "\(onLaptop)")
        #expect(request.stdout == onLaptop.stdout && request.stderr == onLaptop.stderr, "\(request)")

        let asked = try String(contentsOfFile: prompts, encoding: .utf8).split(separator: "\n")
        #expect(asked.count == 1, "one confirmation, remembered for the later requests: \(asked)")
        #expect(
            asked.first?.contains("allow ssh \(Self.remoteUser)@127.0.0.1 to have a token of the sign-in work") == true,
            "\(asked)")
        #expect(try Self.listing(home) == before, "nothing written in the remote user's home")
    }

    // MARK: - Helpers

    /// The remote user (made when missing, with a home and a shell, and a password field that locks nothing for a
    /// key), and its home.
    static func ensureRemoteUser() throws -> String {
        if getpwnam(remoteUser) == nil {
            try run("/usr/sbin/useradd", ["--create-home", "--shell", "/bin/sh", "--password", "*", remoteUser])
        }
        guard let entry = getpwnam(remoteUser) else { throw Problem("no user \(remoteUser)") }
        return String(cString: entry.pointee.pw_dir)
    }

    /// Every path under `folder` with its size and modification time.
    static func listing(_ folder: String) throws -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: folder)
        var entries: [String] = []
        while let name = enumerator?.nextObject() as? String {
            var info = stat()
            lstat("\(folder)/\(name)", &info)
            entries.append("\(name) \(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)")
        }
        return entries.sorted()
    }

    /// Runs `program` and fails unless it exits 0.
    static func run(_ program: String, _ arguments: [String]) throws {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        process.standardInput = nil
        process.standardOutput = nil
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Problem("\(program) \(arguments.joined(separator: " ")) exited \(process.terminationStatus)")
        }
    }

    /// A TCP port free on 127.0.0.1 now.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { throw Problem("no free port: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

extension URL {
    /// This folder, made (0755) when missing.
    fileprivate func creating() throws -> URL {
        try FileManager.default.createDirectory(at: self, withIntermediateDirectories: true)
        return self
    }
}
