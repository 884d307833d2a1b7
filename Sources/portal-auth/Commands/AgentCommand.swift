import ArgumentParser
import Foundation
import PortalAuth

/// `portal-auth agent`: one process of the user's that hands out tokens of the stored sign-ins on a private socket,
/// so that other processes (in any language) ask it instead of reading the store; `agent status`, `agent stop`.
struct AgentCommand: AsyncParsableCommand {
    /// The commands under `portal-auth agent`; add a new command here.
    static let subcommands: [any ParsableCommand.Type] = [
        AgentServeCommand.self, AgentStatusCommand.self, AgentStopCommand.self,
    ]

    static let configuration = CommandConfiguration(
        commandName: "agent",
        abstract: "Serve tokens of the stored sign-ins to this user's processes on a private socket.",
        discussion: """
            `portal-auth agent` (that is, `agent serve`) runs in the foreground and answers on \
            $XDG_RUNTIME_DIR/portal-auth/agent.sock (or --socket), a socket only you can reach: every connection's \
            user is checked, another user's is refused. It hands out access and ID tokens, never refresh tokens, \
            and refreshes through the same store and lock as every other portal-auth process, so a sign-in made or \
            removed with the tool is seen at once and each expiry brings one refresh. `portal-auth token`, `exec` \
            and `request` ask it when $PORTAL_AUTH_AGENT names its socket or the default socket answers. The \
            protocol (JSON lines) is in the library's documentation ("The agent's protocol").
            """,
        subcommands: subcommands,
        defaultSubcommand: AgentServeCommand.self
    )
}

/// The socket option of the `agent` commands.
struct AgentSocketOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The agent's socket (default: $PORTAL_AUTH_AGENT, else $XDG_RUNTIME_DIR/portal-auth/agent.sock).",
            valueName: "path"))
    var socket: String?

    /// The path to use.
    func path() throws -> String {
        if let socket { return socket }
        if let named = AgentSocket.clientPath()?.path { return named }
        throw UsageProblem(
            description: "XDG_RUNTIME_DIR is not set, so the agent has no default socket; give --socket PATH")
    }

    /// The agent's answer to `request` (within 10 s), and the socket asked.
    func ask(_ request: AgentRequest) async throws -> (AgentAnswer, path: String) {
        let path = try path()
        return (try await BlockingWork.run { try AgentSocket.ask(request, at: path, timeout: .seconds(10)) }, path)
    }

    func validate() throws {
        if let socket, !socket.hasPrefix("/") {
            throw ValidationError("--socket \"\(DisplayText.path(socket))\" must be an absolute path")
        }
    }
}

/// `portal-auth agent serve`: the agent itself, in the foreground until `agent stop`, Ctrl-C or SIGTERM.
struct AgentServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the agent in the foreground (the default of `portal-auth agent`).",
        discussion: """
            A second agent on the same socket exits at once (status 64) saying one already serves. Started by \
            systemd socket activation (the user units portal-auth-agent.socket and .service, or \
            systemd-socket-activate), it serves the socket handed over. Each request \
            may take --timeout seconds (the refresh included); a connection that sends nothing for \
            --idle-timeout seconds while no request of its own is in progress is closed; beyond \
            --max-connections at once, a connection is answered "busy" (status 75) and closed.
            """)

    @OptionGroup var socket: AgentSocketOptions

    @Option(help: ArgumentHelp("Seconds a connection may stay idle.", valueName: "seconds"))
    var idleTimeout: Int = 30

    @Option(help: ArgumentHelp("Connections served at once.", valueName: "count"))
    var maxConnections: Int = 128

    @OptionGroup var store: StoreOptions

    func validate() throws {
        guard idleTimeout > 0 else { throw ValidationError("--idle-timeout must be a positive number of seconds") }
        guard (1...4096).contains(maxConnections) else {
            throw ValidationError("--max-connections must be from 1 to 4096, not \(maxConnections)")
        }
    }

    func run() async throws {
        do {
            let path = try socket.path()
            let listener: AgentSocket.Listener
            do {
                // Started by systemd's socket (or systemd-socket-activate): serve the socket handed over.
                listener = try AgentSocket.inheritedListener(path: path) ?? AgentSocket.listen(at: path)
            } catch let error as AgentSocketError where error.code == .alreadyServing {
                StandardError.line("portal-auth: \(error)")
                throw ExitCode(ExitStatus.code(for: .usage))
            }
            defer { listener.close() }
            var limits = AgentServer.Limits()
            limits.idleTimeout = .seconds(idleTimeout)
            limits.maximumConnections = maxConnections
            let service = AgentTokenService(session: store.arguments)
            let server = try AgentServer(
                listener: listener.descriptor,
                details: ["version": .string(PortalAuthVersion.string), "socket": .string(path)], limits: limits
            ) { request, _ in
                await service.answer(request)
            }
            StandardError.line("portal-auth: agent serving on \(DisplayText.path(path)) (pid \(getpid()))")
            do {
                try await Failure.cancellableOnInterrupt { try await server.run() }
            } catch is CancellationError {
                // Ctrl-C or SIGTERM: the socket is removed on the way out.
            }
            StandardError.line("portal-auth: agent stopped")
        } catch let error as ExitCode {
            throw error
        } catch {
            throw Failure.report(error)
        }
    }
}

/// `portal-auth agent status`: whether an agent answers, and what it says of itself.
struct AgentStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Say whether an agent answers on the socket, and its process and counts.",
        discussion: "Exit status: 0 an agent answers; 69 none does.")

    @OptionGroup var socket: AgentSocketOptions

    @Option(help: ArgumentHelp("Output format: text or json.", valueName: "format"))
    var format: OutputFormat = .text

    func run() async throws {
        do {
            let (answer, path) = try await socket.ask(.status)
            guard case .status(let agent) = answer else { throw unexpected(answer, path: path) }
            switch format {
            case .json: Output.json(.object(agent))
            case .text:
                let pid = agent["pid"]?.integerValue.map(String.init) ?? "?"
                let version = agent["version"]?.stringValue.map { DisplayText.neutralised($0, limit: 40) } ?? "?"
                Output.result("An agent (portal-auth \(version), pid \(pid)) serves on \(DisplayText.path(path)).")
                let counts = ["connections", "answered", "refused_other_users", "refused_busy"].map {
                    "\($0.replacingOccurrences(of: "_", with: " ")): \(agent[$0]?.integerValue ?? 0)"
                }
                Output.result(counts.joined(separator: ", "))
            }
        } catch {
            throw Failure.report(error)
        }
    }
}

/// `portal-auth agent stop`: asks the agent to stop.
struct AgentStopCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stop",
        abstract: "Stop the agent that serves on the socket.",
        discussion: "Exit status: 0 the agent is stopping; 69 no agent answers.")

    @OptionGroup var socket: AgentSocketOptions

    func run() async throws {
        do {
            let (answer, path) = try await socket.ask(.stop)
            guard case .stopping = answer else { throw unexpected(answer, path: path) }
            StandardError.line("portal-auth: the agent on \(DisplayText.path(path)) is stopping")
        } catch {
            throw Failure.report(error)
        }
    }
}

/// An answer that is not the one asked for: a failure as the agent said it, else a protocol error.
private func unexpected(_ answer: AgentAnswer, path: String) -> any Error {
    if case .failure(let failure) = answer { return failure }
    return AgentSocketError(
        .socket, "the agent at \(DisplayText.path(path)) answered another request than the one sent")
}
