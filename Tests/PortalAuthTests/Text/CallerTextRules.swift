import Foundation

/// Why a value interpolated into a caller's text (`MessageSourceScan.callerTextInterpolations()`) cannot be empty:
/// `EmptyValueMessageTests` requires every interpolation to match one rule, so a new one that could be empty fails
/// until its words are left out with `MessagePart.given`/`or` (or a rule says why it cannot be).
///
/// A rule matches the whole expression (a regular expression), in every file or only in `files` (names ending the
/// path), and, with `context`, only in a literal that contains it. A rule that matches nothing fails too, so that the table stays what the sources hold.
struct CallerTextRules {
    struct Rule: CustomStringConvertible {
        let expression: String
        var files: [String] = []
        var context: String? = nil
        let reason: String
        var description: String { "\(files.isEmpty ? "everywhere" : files.joined(separator: ", ")): \(expression)" }

        func matches(_ value: MessageSourceScan.Interpolation) -> Bool {
            (files.isEmpty || files.contains { value.file.hasSuffix("/" + $0) })
                && (context.map { value.literal.contains($0) } ?? true)
                && value.expression.range(of: "^(?:\(expression))$", options: .regularExpression) != nil
        }
    }

    /// The rule for `value`, or nil when none says why it cannot be empty (nor `othersGaps` that it can).
    static func rule(for value: MessageSourceScan.Interpolation) -> Rule? {
        (othersGaps + rules).first { $0.matches(value) }
    }

    static let rules: [Rule] = general + library + tool + agent

    /// Kinds of values that are never empty wherever they stand.
    static let general: [Rule] = [
        Rule(
            expression: #"MessagePart\.(given|or|quoted)\(.*\)"#,
            reason: "MessagePart leaves the words out, or puts its fallback in, when the value is empty"),
        Rule(
            expression: #"String\(cString: (strerror\(\w+(\.errno)?\)|pa_\w+_load_error\(\))\)"#,
            reason: "strerror's text for an errno, or the loader's (which names the library file), is never empty"),
        Rule(
            expression:
                #"error(\.description|\.localizedDescription|\.message\(showingPaths: DisplayText\.path\))?|ErrorReport\.message\(for: error, .*\)"#,
            reason:
                "an error's message: noGap renders every message type of the sources non-empty, and Foundation's and the system's errors have words"
        ),
        Rule(
            expression:
                #"(errno|limit|timeout|minValid|expiration|maxConnections|confirmTimeout|confirmRemember|allowedUID|run\.status|getuid\(\)|info\.st_uid|String\(info\.st_mode & 0o777, radix: 8\))"#,
            reason: "a number (or a date): its text always has a digit"),
        Rule(
            expression:
                #"(Self|TokenCredential|OutOfBandRedirect|AgentProtocol|SchemeChannelReply|limits)\.(secretVariable|defaultReferer|uri|version|maximum\w+)"#,
            reason: "a constant of the sources, written as a literal (a name, an address or a number)"),
        Rule(
            expression: #"\([^"]* \? "[^"]+" : "[^"]+"\)"#,
            reason: "a choice between two literals that are not empty"),
        Rule(
            expression: #"problem"#, files: ["TokenPrinter.swift", "TokenInvocation.swift", "ExecCommand.swift"],
            reason: "TokenCharacters.problem(inToken:) is nil or one of its literal sentences"),
        Rule(
            expression: #"(credential|issued)\.(target|targetDescription)"#,
            files: ["TokenInvocation.swift", "ExecCommand.swift", "RevokeCommand.swift"],
            reason:
                "what a sign-in is for, made by the sources: \"the portal <URL>\", \"the identity provider at <host>\" or the IAP file's path"
        ),
    ]

    /// The library's callers (`SchemeRedirectError`, `TerminalInputError`).
    static let library: [Rule] = [
        Rule(
            expression: #"lowered|scheme|redirect\.scheme|redirect|mimeType"#,
            files: ["SchemeRegistration.swift", "SchemeRedirectForwarder.swift", "SchemeRedirectError.swift"],
            reason:
                "a custom scheme checked by CustomSchemeRedirect (init refuses any other), or the redirect URL or MIME type made of one"
        ),
        Rule(
            expression: #"other"#, files: ["SchemeRegistration.swift"],
            reason:
                "status() returns .handledBy only for a non-empty answer of xdg-mime (an empty one is .notRegistered)"),
        Rule(
            expression: #"desktopFileID|desktopFilePath|path|DisplayText\.path\(path\)|configDirectory|file|now"#,
            files: ["SchemeRegistration.swift"],
            reason:
                "the desktop file's ID (a blank one given to init is replaced by the default) and the paths made of it and of the applications and configuration folders (absolute or relative to HOME, with a name appended), a file lstat found, or a Status case"
        ),
        Rule(
            expression: #"name|executable|arguments\.joined\(separator: " "\)|detail"#, files: ["DesktopTool.swift"],
            reason:
                "the tool's name and arguments are literals of SchemeRegistration (xdg-mime, update-desktop-database) and the applications folder, executable the path found on PATH; detail is \"\" or \": <output>\" (its words left out with it)"
        ),
        Rule(
            expression: #"path|Self\.refusal\(path, error\)"#, files: ["RedirectChannelDirectory.swift"],
            reason:
                "the channel folder: an absolute path under XDG_RUNTIME_DIR (path(environment:) returns nil for any other); refusal names it and the PathProblem's message"
        ),
        Rule(
            expression: #"unique\.joined\(separator: "; "\)"#, files: ["SchemeRedirectForwarder.swift"],
            reason:
                "the reasons of the waiting sign-ins (a blank one is \"no reason given\"), one at least (guarded before)"
        ),
        Rule(
            expression: #"message"#, files: ["Failure.swift"],
            reason:
                "the parameter of a caller-text maker (InputError.usage, .unreadable), whose callers this scan reads"),
    ]

    /// The tool's callers (`ValidationError`, `UsageProblem`, `InputError`, `ExecFailure`).
    static let tool: [Rule] = [
        Rule(
            expression: #"environmentVariable"#, files: ["ProxyTokenChoice.swift"],
            reason: "the literal name PORTAL_AUTH_PROXY_TOKEN"),
        Rule(
            expression: #"DisplayText\.path\(config\)|configuration\.redirectURL\.absoluteString"#,
            files: ["SchemeSelection.swift"],
            reason: "the IAP file was read from this path (an empty one cannot be), and a URL's text is never empty"),
        Rule(
            expression: #"forced\.joined\(separator: " and "\)|given\.joined\(separator: ", "\)"#,
            files: ["SessionArguments.swift", "SelectionArguments.swift"],
            reason: "option names (literals), of which there are two at least where this is thrown"),
        Rule(
            expression: #"what"#, files: ["SecretInput.swift"],
            reason: "the literal its callers name the secret with (\"password\", \"client secret\")"),
        Rule(
            expression: #"DisplayText\.path\(path\)"#, files: ["SecretInput.swift"], context: "file \\(",
            reason: "the file was read from this path just before (reading an empty path fails, and says so without it)"
        ),
        Rule(
            expression: #"reason"#, files: ["SecretInput.swift"],
            reason: "one of two literals (\"it cannot be read (permissions?)\", \"no such file\")"),
        Rule(
            expression: #"username"#, files: ["GenerateTokenCommand.swift"],
            reason: "validate() refuses a blank --username"),
        Rule(
            expression: #"url\.absoluteString"#, files: ["TokenInvocation.swift"],
            reason: "a portal URL that has a host (SelectionArguments.httpURL)"),
        Rule(
            expression:
                #"\(command\.map \{ .* \}\s*\?\? " `portal-auth iap logout --config FILE` \(the IAP file it was signed in with\)"\)"#,
            files: ["RevokeCommand.swift"],
            reason: "a command ShellWord.command made, or the literal after ??"),
        Rule(
            expression: #"name"#, files: ["ExecCommand.swift"],
            reason: "arguments[0], the command name, which resolved on PATH before execve (an empty one does not)"),
    ]

    /// The agent's callers (`AgentFailure`, `AgentSocketError`; files the agent's branch changes).
    static let agent: [Rule] = [
        Rule(
            expression: #"DisplayText\.path\(path\)"#, files: ["AgentForwarding.swift"],
            context: "is not a list of sign-ins marked",
            reason: "the marks file's path: the store's path with a suffix added (path(forStore:)), never empty"),
        Rule(
            expression: #"remote\.description|signIn|why"#, files: ["AgentForwarding.swift"],
            reason:
                "the remote (\"ssh HOST\", \"process NAME\" or \"an unknown process (pid N)\"), a marked sign-in's name (a valid name is never empty) and the confirmers' reasons (literals with words)"
        ),
        Rule(
            expression: #"value\.typeName"#, files: ["AgentProtocol.swift"],
            reason: "a JSON type's name: a literal (\"string\", \"array\", …)"),
        Rule(
            expression: #"version\.serialized\(\)"#, files: ["AgentProtocol.swift"],
            reason:
                "the JSON text of the value given, never empty (an empty string shows as its two quotes, which is what was sent)"
        ),
        Rule(
            expression: #"key"#, files: ["AgentProtocol.swift"],
            reason:
                "a literal key of the protocol (\"client_id\", \"portal\", …) string(_:) and httpURL(_:) are called with"
        ),
        Rule(
            expression: #"named\.map \{ .* \}\.joined\(separator: ", "\)"#, files: ["AgentProtocol.swift"],
            reason: "the literal keys given, two at least where this is thrown"),
        Rule(
            expression: #"message"#, files: ["AgentProtocol.swift"],
            reason: "the parameter of AgentFailure.badRequest, whose callers this scan reads"),
        Rule(
            expression: #"operation"#, files: ["AgentProtocol.swift"], context: #"is not a key of \"op\""#,
            reason: "\"status\" or \"stop\": the case this is thrown in"),
        Rule(
            expression: #"DisplayText\.path\((path|lockPath|folder|socket)\)|path"#,
            files: ["AgentSocket.swift", "AgentCommand.swift", "AgentTokenService.swift"],
            reason:
                "the agent's socket path, its lock or its folder: listen(at:) and --socket refuse a relative path first (their own messages are in othersGaps), PORTAL_AUTH_AGENT is used only when not empty, and the default is under XDG_RUNTIME_DIR"
        ),
    ]

    /// Values that can be empty in files another branch changes (the agent's): left for it, and known issues of the
    /// test until they are gone (the test fails then, so that the entry is removed).
    static let othersGaps: [Rule] = []
}
