import ArgumentParser
import Foundation
import Glibc
import PortalAuth
import Synchronization

/// The `portal-auth` tool: the root command that holds every subcommand.
@main
struct PortalAuthCommand: AsyncParsableCommand {
    /// The commands under `portal-auth`; add a new command here.
    static let subcommands: [any ParsableCommand.Type] = [
        LoginCommand.self,
        IAPCommand.self,
        StatusCommand.self,
        UseCommand.self,
        NameCommand.self,
        TokenCommand.self,
        ExecCommand.self,
        AgentCommand.self,
        RefreshCommand.self,
        RevokeCommand.self,
        SignOutCommand.self,
        StoreCommand.self,
        GenerateTokenCommand.self,
        AppTokenCommand.self,
        RequestCommand.self,
        RegisterSchemeCommand.self,
        UnregisterSchemeCommand.self,
        HandleRedirectCommand.self,
        CompletionCommand.self,
    ]

    static let configuration = CommandConfiguration(
        commandName: "portal-auth",
        abstract: "Sign in to ArcGIS portals and to services behind an Identity-Aware Proxy from Linux.",
        discussion: RootHelp.lead + "\n\n" + RootHelp.reference,
        version: PortalAuthVersion.string,
        subcommands: subcommands
    )

    /// Runs the tool: core dumps are disabled before any token or password is in memory, and every command's
    /// `--timeout` counts from here (see `CommandClock`); then the chosen subcommand runs. A plain `token` or
    /// `refresh` command line skips ArgumentParser (see `FastCommandLine`).
    ///
    /// Synchronous, unlike ArgumentParser's own: the fast path runs on this thread (`CallerThreadExecutor`);
    /// the other commands run on the main actor while the main thread serves its queue, as an `async` main would.
    static func main() {
        do {
            try CoreDumpProtection.disable()
        } catch {
            StandardError.line("portal-auth: warning: \(error)")
        }
        _ = CommandClock.start
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments == ["--version"] {
            // Asked here, not in the configuration: the libraries' versions are looked up only when wanted.
            print("portal-auth \(PortalAuthVersion.string) (\(LinkedLibraryVersions.description()))")
            return
        }
        let mode = FastCommandLine.Mode.current
        let fast = mode == .off ? nil : FastCommandLine.invocation(arguments)
        if fast == nil && mode == .only {
            StandardError.line(FastCommandLine.refusal)
            Glibc.exit(ExitStatus.code(for: .local))
        }
        if let invocation = fast {
            CallerThreadExecutor.run {
                do {
                    try await invocation.run()
                } catch {
                    // The same ending as the full path: the exit status, and the JSON error under --format json.
                    finish(with: error, arguments: arguments)
                }
            }
            return
        }
        Task { @MainActor in
            await runParsed(arguments)
            Glibc.exit(0)
        }
        dispatchMain()
    }

    /// Parses `arguments` with ArgumentParser and runs the command, or ends the process for what fails.
    @MainActor
    private static func runParsed(_ arguments: [String]) async {
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            finish(with: error, arguments: arguments)
        }
    }

    /// Ends the process for `error`: help and `--version` as the argument parser prints them; every failure with
    /// one prefix, `portal-auth: error: …` (the parser's own messages included), and under `--format json` also
    /// as a JSON object on stdout (see `ErrorReport`), unless the command printed its own JSON document already.
    static func finish(with error: any Error, arguments: [String]) -> Never {
        let status = exitCode(for: error).rawValue
        if status == 0 {
            // The top-level help: what to run first, then the usage and commands, then the reference text.
            if let help = RootHelp.reordered(fullMessage(for: error)) {
                print(help)
                Foundation.exit(0)
            }
            exit(withError: error)
        }
        if !(error is ExitCode) {
            // The parser's errors ("Error: …" and a usage line) and anything a command did not report itself.
            let category =
                (error as? any CategorizedError)?.category ?? (error is CancellationError ? .cancelled : .usage)
            // A library error says what an app sets; the tool says it with its options (ErrorReport).
            var message = error is any CategorizedError ? ErrorReport.message(for: error) : fullMessage(for: error)
            if message.hasPrefix("Error: ") { message.removeFirst("Error: ".count) }
            if message.isEmpty { message = "\(error)" }
            message = ErrorReport.escapingArguments(Self.lowercasingFirstWord(message), arguments: arguments)
            StandardError.line("portal-auth: error: \(message)")
            ErrorReport.record(message.components(separatedBy: "\nUsage: ").first ?? message, category: category)
        }
        if wantsJSONError(arguments), !ErrorReport.printedJSON.withLock({ $0 }),
            let report = ErrorReport.last.withLock({ $0 })
        {
            Output.json(ErrorReport.json(status: status, message: report.message, category: report.category))
        }
        Foundation.exit(status)
    }

    /// The parser's messages begin with a capital ("Missing expected argument …"), the tool's with a small letter,
    /// after the same `portal-auth: error:` prefix: one way for all (a word in capitals, such as URL, stays).
    static func lowercasingFirstWord(_ message: String) -> String {
        guard let first = message.first, first.isUppercase, let second = message.dropFirst().first, second.isLowercase
        else {
            return message
        }
        return first.lowercased() + message.dropFirst()
    }

    private static func wantsJSONError(_ arguments: [String]) -> Bool { ErrorReport.wantsJSON(arguments) }
}
