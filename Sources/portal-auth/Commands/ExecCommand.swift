import ArgumentParser
import Foundation
import Glibc
import PortalAuth

/// `portal-auth exec`: runs a command with a fresh token in its environment, the way `aws-vault exec` does.
///
/// The tool replaces itself with the command (`execve`) once the token is in hand: the command's exit status is
/// the tool's, and signals reach it directly (there is no process in between to forward them). The token is put
/// only into the environment given to `execve`: never into an argument, never into this process's own
/// environment, so no other child (a browser) can see it.
struct ExecCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "exec",
        abstract: "Run a command with a fresh token in its environment.",
        usage: "portal-auth exec [<selection>] [<options>] -- <command> [<argument> ...]",
        discussion: """
            Picks the stored sign-in as `portal-auth token` does (the only one, the default, --portal, --iap, \
            --url, --name), refreshes it when it has less than --min-valid seconds left, and runs the command \
            with these variables set (only in its environment, never on a command line):

              PORTAL_AUTH_TOKEN             the access token; for an IAP sign-in the token
                                            sent to the hosts behind the proxy: the ID token
                                            (--proxy-token access, or the choice
                                            stored by iap login: the access token)
              PORTAL_AUTH_TOKEN_TYPE        Bearer
              PORTAL_AUTH_TOKEN_EXPIRES_AT  its expiry, ISO 8601
              PORTAL_AUTH_KIND              oauth-user or iap
              PORTAL_AUTH_URL               --url URL, else the portal or the IdP
              ARCGIS_TOKEN                  the access token (portal sign-ins)
              PORTAL_AUTH_ID_TOKEN          the ID token (IAP sign-ins that hold one)

            Every other PORTAL_AUTH_* variable and ARCGIS_TOKEN in portal-auth's own environment (left by an \
            outer exec or a CI job, possibly another sign-in's tokens) is removed from the command's \
            environment; only the tool's settings PORTAL_AUTH_STORE, PORTAL_AUTH_CA_BUNDLE, \
            PORTAL_AUTH_LAUNCH_DIR, PORTAL_AUTH_FAST_PATH and PORTAL_AUTH_AGENT pass through unchanged, and \
            PORTAL_AUTH_PROXY_TOKEN is set to the --proxy-token choice (else passed through), so a portal-auth \
            the command runs sends the same token to hosts behind the proxy. PORTAL_AUTH_CLIENT_SECRET is \
            removed too.

            The command replaces portal-auth (exec): its exit status is passed through and signals reach it \
            directly. A token expiring while the command runs is not renewed: PORTAL_AUTH_TOKEN_EXPIRES_AT \
            says when it ends, and identity providers may issue tokens for minutes or seconds only (a \
            20-second token ended a Python job with ArcGIS error 498 after 22 s). A job that may outlive its \
            token should ask for a fresh one before each call, or when a call is refused, with `portal-auth \
            token` (add --url URL for the token sent to a host behind a proxy; it refreshes only when needed, \
            and is safe to run in parallel), or be split into shorter runs of `portal-auth exec`. \
            --min-valid only makes sure the token is good for that many seconds when the command starts.

            Examples:
              portal-auth exec -- sh -c \\
                  'curl -H "X-Esri-Authorization: Bearer $ARCGIS_TOKEN" "$0"' \\
                  'https://www.arcgis.com/sharing/rest/portals/self?f=json'
              portal-auth exec --name work -- python3 publish.py

            Exit status: the command's; 64 wrong usage; 77 a sign-in is needed; 69 the identity provider is \
            unreachable; 126 the command cannot be run; 127 it was not found.
            """
    )

    @OptionGroup var selection: CredentialSelection

    @Option(
        name: .customLong("min-valid"),
        help: ArgumentHelp(
            "Seconds the token must stay valid when the command starts; refresh first when it has less (tokens the provider "
                + "issues for less: refresh once half their lifetime has passed).", valueName: "seconds"))
    var minValid: Int = 300

    @Option(name: .customLong("proxy-token"), help: ProxyTokenChoice.help)
    var proxyToken: ProxyTokenChoice?

    @OptionGroup var session: StoreOptions

    @Argument(
        parsing: .postTerminator, help: ArgumentHelp("The command and its arguments, after --.", valueName: "command"))
    var command: [String] = []

    func validate() throws {
        guard !command.isEmpty else {
            throw ValidationError("give the command to run after --, e.g. portal-auth exec -- env")
        }
        guard minValid >= 0 else { throw ValidationError("--min-valid must be 0 or more seconds, not \(minValid)") }
        _ = try ProxyTokenChoice.resolved(proxyToken)
    }

    func run() async throws {
        let environment: [String: String]
        let executable: String
        do {
            let choice = try ProxyTokenChoice.override(proxyToken)
            // The agent's when one serves (see `AgentAsk`), else the store's.
            let fromAgent = try AgentAsk.token(
                AgentTokenRequest(
                    selection: selection.target, minValid: minValid, proxyToken: choice?.token, forHosts: true),
                session: session.arguments)
            let issued: IssuedToken
            if let fromAgent { issued = fromAgent } else { issued = try await storedToken(choice: choice) }
            if let problem = TokenCharacters.problem(inToken: issued.value) {
                throw InputError(
                    category: .invalidContent,
                    description: "the stored token for \(issued.target) cannot be passed on: \(problem). Sign in again."
                )
            }
            environment = Self.commandEnvironment(
                inherited: ProcessInfo.processInfo.environment, issued: issued, asked: Self.askedURL(selection.target),
                proxyToken: proxyToken == nil
                    && ProcessEnvironment.value(of: ProxyTokenChoice.environmentVariable) == nil ? nil : choice)
            executable = try Self.resolve(command[0], path: ProcessInfo.processInfo.environment["PATH"])
        } catch let failure as ExecFailure {
            StandardError.line("portal-auth: error: \(failure.description)")
            throw ExitCode(failure.status)
        } catch {
            throw Failure.report(error)
        }
        let failure = Self.replaceProcess(executable: executable, arguments: command, environment: environment)
        StandardError.line("portal-auth: error: \(failure.description)")
        throw ExitCode(failure.status)
    }

    /// The token of the stored sign-in, as `tokenForHosts` gives it (refreshed first when needed).
    private func storedToken(choice: ProxyTokenChoice?) async throws -> IssuedToken {
        let store = try session.credentialStore()
        guard let credential = try await SelectedCredential.find(selection.target, in: store) else {
            throw SignInNeeded(
                reason: TokenCommand.nothingStored(for: selection.target),
                command: SelectedCredential.signInCommand(
                    for: selection.target, store: session.store, preferences: try store.preferences()))
        }
        let minValid = self.minValid
        do {
            let issued = try await Failure.cancellableOnInterrupt {
                try await credential.tokenForHosts(minimumValidity: .seconds(minValid), choice: choice)
            }
            await credential.warnOnceAboutShortLifetime(of: issued, minValid: minValid)
            return issued
        } catch let error as CredentialError where error.requiresSignIn {
            throw SignInNeeded(reason: "\(error)", command: credential.signInCommand(store: session.store))
        }
    }

    // MARK: - Environment

    /// The tool's own settings that a command run by `exec` keeps (a nested `portal-auth` behaves the same).
    /// None of them holds a secret.
    static let passedThrough: Set<String> = [
        "PORTAL_AUTH_STORE", "PORTAL_AUTH_CA_BUNDLE", "PORTAL_AUTH_LAUNCH_DIR", "PORTAL_AUTH_FAST_PATH",
        AgentSocket.environmentVariable, ProxyTokenChoice.environmentVariable,
    ]

    /// The command's environment: the inherited one without any variable of the token family (`PORTAL_AUTH_*`
    /// other than ``passedThrough``, and `ARCGIS_TOKEN`), then the variables of this sign-in.
    ///
    /// Another sign-in's token left in the environment (an outer `exec`, a CI job's variables) would otherwise reach
    /// a command run for this one: `ARCGIS_TOKEN` beside an IAP sign-in's variables, a stale `PORTAL_AUTH_ID_TOKEN`.
    /// `PORTAL_AUTH_CLIENT_SECRET` (`app-token`'s secret) is removed as well.
    /// `asked`: the URL given with `--url` (see ``variables(for:asked:)``). `proxyToken`: the choice of `--proxy-token`
    /// or `$PORTAL_AUTH_PROXY_TOKEN`, set as `PORTAL_AUTH_PROXY_TOKEN` so that a `portal-auth` the command runs sends
    /// the same token to hosts behind the proxy.
    static func commandEnvironment(
        inherited: [String: String], issued: IssuedToken, asked: URL? = nil, proxyToken: ProxyTokenChoice? = nil
    ) -> [String: String] {
        var environment = inherited.filter { name, _ in !isTokenFamily(name) }
        environment.merge(variables(for: issued, asked: asked)) { $1 }
        if let proxyToken { environment[ProxyTokenChoice.environmentVariable] = proxyToken.rawValue }
        return environment
    }

    /// Whether `name` belongs to the variables `exec` owns: set for the sign-in, or removed.
    static func isTokenFamily(_ name: String) -> Bool {
        name == "ARCGIS_TOKEN" || (name.hasPrefix("PORTAL_AUTH_") && !passedThrough.contains(name))
    }

    /// The variables that carry the token to the command.
    /// The URL given with `--url`, if that is how the sign-in was chosen.
    static func askedURL(_ target: CredentialSelection.Target) -> URL? {
        if case .url(let url) = target { return url }
        return nil
    }

    /// `asked`: the URL given with `--url`, which `PORTAL_AUTH_URL` then names instead of the sign-in's own.
    static func variables(for issued: IssuedToken, asked: URL? = nil) -> [String: String] {
        var variables = [
            "PORTAL_AUTH_TOKEN": issued.value,
            "PORTAL_AUTH_TOKEN_TYPE": issued.type,
            "PORTAL_AUTH_TOKEN_EXPIRES_AT": issued.expirationDate.ISO8601Format(),
            "PORTAL_AUTH_KIND": issued.kind.rawValue,
            "PORTAL_AUTH_URL": (asked ?? issued.url).absoluteString,
        ]
        if issued.kind == .oauthUser { variables["ARCGIS_TOKEN"] = issued.value }
        if issued.kind == .iap, let idToken = issued.idToken { variables["PORTAL_AUTH_ID_TOKEN"] = idToken }
        return variables
    }

    // MARK: - Running

    /// A command that could not be run: 127 not found, 126 not executable.
    struct ExecFailure: Error, CustomStringConvertible {
        let status: Int32
        let description: String
    }

    /// The path of `name`: as given when it holds a slash, else the first executable file of that name on `path`.
    static func resolve(_ name: String, path: String?) throws -> String {
        if name.contains("/") { return name }
        for directory in (path ?? "/usr/local/bin:/usr/bin:/bin").split(
            separator: ":", omittingEmptySubsequences: false)
        {
            let candidate = (directory.isEmpty ? "." : String(directory)) + "/" + name
            var info = stat()
            if access(candidate, X_OK) == 0, stat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFREG {
                return candidate
            }
        }
        throw ExecFailure(
            status: 127,
            description:
                "\(MessagePart.or(DisplayText.neutralised(name, limit: 200), "an empty command name")): command not found on PATH"
        )
    }

    /// Replaces this process with the command; returns only when `execve` failed.
    static func replaceProcess(executable: String, arguments: [String], environment: [String: String]) -> ExecFailure {
        // The signal mask survives execve, and this may run on a thread that blocks signals (the tool's signal
        // watchers are gone by now and have put back the dispositions the tool started with, so a signal ignored at
        // start, as under nohup, stays ignored for the command).
        var empty = sigset_t()
        sigemptyset(&empty)
        pthread_sigmask(SIG_SETMASK, &empty, nil)
        fflush(nil)
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        execve(executable, argv, envp)
        let code = errno
        argv.forEach { free($0) }
        envp.forEach { free($0) }
        let name = DisplayText.neutralised(arguments[0], limit: 200)
        let status: Int32 = code == ENOENT ? 127 : 126
        return ExecFailure(status: status, description: "\(name) cannot be run: \(String(cString: strerror(code)))")
    }
}
