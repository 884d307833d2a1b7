import ArgumentParser
import Foundation
import PortalAuth

/// `portal-auth agent`: one process of the user's that hands out tokens of the stored sign-ins on a private socket,
/// so that other processes (in any language) ask it instead of reading the store; `agent status`, `agent stop`.
struct AgentCommand: AsyncParsableCommand {
    /// The commands under `portal-auth agent`; add a new command here.
    static let subcommands: [any ParsableCommand.Type] = [
        AgentServeCommand.self, AgentStatusCommand.self, AgentStopCommand.self, AgentForwardCommand.self,
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

            Forwarding over SSH: the agent also answers on $XDG_RUNTIME_DIR/portal-auth/agent-forward.sock \
            (--forward-socket, --no-forward), meant for `ssh -R`. There it hands out tokens only of the sign-ins \
            marked with `portal-auth agent forward allow NAME`, each sign-in and remote confirmed first (by \
            --confirm-command or $PORTAL_AUTH_CONFIRM, else on the agent's terminal; no answer in 30 s is no; a yes \
            holds 10 minutes), never a refresh token, and it never stops on request. On the remote machine \
            (REMOTE_UID: your user ID there), a token of the laptop's sign-in with nothing stored there:
              ssh -R /run/user/REMOTE_UID/portal-auth-agent.sock:$XDG_RUNTIME_DIR/portal-auth/agent-forward.sock HOST
              (on HOST) PORTAL_AUTH_AGENT=/run/user/REMOTE_UID/portal-auth-agent.sock portal-auth token --url URL
            or in ~/.ssh/config (%i: your user ID here):
              Host HOST
                RemoteForward /run/user/REMOTE_UID/portal-auth-agent.sock /run/user/%i/portal-auth/agent-forward.sock
                StreamLocalBindUnlink yes
            and StreamLocalBindUnlink yes in HOST's sshd_config, so that a socket left by an earlier connection is \
            replaced.
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
            throw ValidationError(
                "--socket must be an absolute path\(MessagePart.given(", not \"", DisplayText.path(socket), "\""))")
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
            --max-connections at once, a connection is answered "busy" (status 75) and closed. It also serves the \
            forwarding socket for `ssh -R` (see `portal-auth agent --help`), which it opens itself, also when \
            started by socket activation: the units hold only the agent's own socket.
            """)

    @OptionGroup var socket: AgentSocketOptions

    @Option(help: ArgumentHelp("Seconds a connection may stay idle.", valueName: "seconds"))
    var idleTimeout: Int = 30

    @Option(help: ArgumentHelp("Connections served at once.", valueName: "count"))
    var maxConnections: Int = 128

    @Option(
        help: ArgumentHelp(
            "The socket meant for `ssh -R` (default: agent-forward.sock beside the agent's socket).",
            valueName: "path"))
    var forwardSocket: String?

    @Flag(help: "Do not open the forwarding socket.")
    var noForward = false

    @Flag(help: "Hand out tokens of the marked sign-ins on the forwarding socket without asking.")
    var noConfirm = false

    @Option(
        help: ArgumentHelp(
            "The program that confirms a forwarded request (default: $PORTAL_AUTH_CONFIRM, else the agent's terminal).",
            discussion: """
                Run askpass-style with the prompt as its only argument and a reduced environment (no PORTAL_AUTH_ \
                variable, no secret): exit status 0 allows, anything else refuses.
                """,
            valueName: "program"))
    var confirmCommand: String?

    @Option(help: ArgumentHelp("Seconds a confirmation may take; no answer by then is no.", valueName: "seconds"))
    var confirmTimeout: Int = 30

    @Option(
        help: ArgumentHelp(
            "Seconds a confirmation holds for its sign-in and remote (0: ask every time).", valueName: "seconds"))
    var confirmRemember: Int = 600

    @OptionGroup var store: StoreOptions

    /// The environment variable naming the confirmation program.
    static let confirmVariable = "PORTAL_AUTH_CONFIRM"

    func validate() throws {
        guard idleTimeout > 0 else { throw ValidationError("--idle-timeout must be a positive number of seconds") }
        guard (1...4096).contains(maxConnections) else {
            throw ValidationError("--max-connections must be from 1 to 4096, not \(maxConnections)")
        }
        if let forwardSocket, !forwardSocket.hasPrefix("/") {
            throw ValidationError(
                "--forward-socket must be an absolute path\(MessagePart.given(", not \"", DisplayText.path(forwardSocket), "\""))"
            )
        }
        if noForward && (forwardSocket != nil || noConfirm || confirmCommand != nil) {
            throw ValidationError("--no-forward goes with no other forwarding option")
        }
        guard (1...3600).contains(confirmTimeout) else {
            throw ValidationError("--confirm-timeout must be from 1 to 3600 seconds, not \(confirmTimeout)")
        }
        guard (0...86_400).contains(confirmRemember) else {
            throw ValidationError("--confirm-remember must be from 0 to 86400 seconds, not \(confirmRemember)")
        }
    }

    /// How forwarded requests are confirmed: `--no-confirm`, the program, the terminal, or no way (all refused).
    func forwardPolicy() -> AgentForwardPolicy {
        let command =
            confirmCommand ?? ProcessEnvironment.value(of: Self.confirmVariable).flatMap { $0.isEmpty ? nil : $0 }
        let confirmer: AgentConfirmer
        if let command {
            confirmer = AgentConfirmers.command(command)
        } else if isatty(0) == 1 && StandardError.isTerminal {
            confirmer = AgentConfirmers.terminal()
        } else {
            confirmer = AgentConfirmers.none(
                "no confirmation program is set (--confirm-command or \(Self.confirmVariable)) and the agent has no terminal to ask on"
            )
        }
        return AgentForwardPolicy(
            confirms: !noConfirm, timeout: .seconds(confirmTimeout), remember: .seconds(confirmRemember),
            confirmer: confirmer)
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
            let version: JSONObject = ["version": .string(PortalAuthVersion.string)]
            // The forwarding socket: opened here even when systemd handed over the agent's own socket.
            let forward: (listener: AgentSocket.Listener, server: AgentServer, policy: AgentForwardPolicy)?
            if noForward {
                forward = nil
            } else {
                let forwardPath = forwardSocket ?? AgentSocket.forwardPath(besides: path)
                let forwardListener: AgentSocket.Listener
                do throws(AgentSocketError) {
                    forwardListener = try AgentSocket.listen(at: forwardPath)
                } catch {
                    guard error.code == .alreadyServing else { throw error }
                    StandardError.line(
                        "portal-auth: another agent serves the forwarding socket \(DisplayText.path(forwardPath)); "
                            + "give this one --forward-socket PATH or --no-forward")
                    throw ExitCode(ExitStatus.code(for: .usage))
                }
                let policy = forwardPolicy()
                let forwarding = AgentForwardService(service: service, policy: policy)
                let server = try AgentServer(
                    listener: forwardListener.descriptor, role: .forward, details: version, limits: limits
                ) { request, peer in
                    await forwarding.answer(request, peer: peer)
                }
                forward = (forwardListener, server, policy)
            }
            defer { forward?.listener.close() }
            let forwardStatus: @Sendable () -> JSONObject = { [forward] in
                guard let forward else { return ["forward": .null] }
                let (counts, policyCounts) = (forward.server.counts, forward.policy.counts)
                return [
                    "forward": .object([
                        "socket": .string(forward.listener.path), "confirms": .bool(forward.policy.confirms),
                        "connections": .integer(Int64(counts.open)), "allowed": .integer(Int64(policyCounts.allowed)),
                        "refused_not_marked": .integer(Int64(policyCounts.refusedNotMarked)),
                        "refused_not_confirmed": .integer(Int64(policyCounts.refusedNotConfirmed)),
                    ])
                ]
            }
            var details = version
            details["socket"] = .string(path)
            let server = try AgentServer(
                listener: listener.descriptor, details: details, statusExtras: forwardStatus, limits: limits,
                immediate: { request, _ in service.kept(request) }
            ) { request, _ in
                await service.answer(request)
            }
            StandardError.line("portal-auth: agent serving on \(DisplayText.path(path)) (pid \(getpid()))")
            if let forward {
                StandardError.line(
                    "portal-auth: forwarding socket (for ssh -R) on \(DisplayText.path(forward.listener.path))"
                        + (forward.policy.confirms ? "" : ", without confirmation"))
            }
            do {
                try await Failure.cancellableOnInterrupt {
                    try await withThrowingTaskGroup(of: Void.self) { [forward] group in
                        group.addTask { try await server.run() }
                        if let forward { group.addTask { try await forward.server.run() } }
                        // The agent's own server ends on `stop`; the forwarding socket's ends with it.
                        try await group.next()
                        server.stop()
                        forward?.server.stop()
                        try await group.waitForAll()
                    }
                }
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
                Output.result(
                    Self.counts(["connections", "answered", "refused_other_users", "refused_busy"], of: agent))
                if case .object(let forward)? = agent["forward"] {
                    let socket = forward["socket"]?.stringValue.map(DisplayText.path) ?? "?"
                    let confirms = forward["confirms"]?.boolValue == false ? ", without confirmation" : ""
                    Output.result("Forwarding socket (for ssh -R): \(socket)\(confirms).")
                    Output.result(
                        Self.counts(
                            ["connections", "allowed", "refused_not_marked", "refused_not_confirmed"], of: forward))
                } else if agent["forward"] == .null {
                    Output.result("No forwarding socket (--no-forward).")
                }
            }
        } catch {
            throw Failure.report(error)
        }
    }

    /// "connections: 1, answered: 5, …": the counts `keys` names in `object` (0 when absent).
    private static func counts(_ keys: [String], of object: JSONObject) -> String {
        keys.map { "\($0.replacingOccurrences(of: "_", with: " ")): \(object[$0]?.integerValue ?? 0)" }
            .joined(separator: ", ")
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
