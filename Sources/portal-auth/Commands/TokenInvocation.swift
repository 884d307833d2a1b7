import ArgumentParser
import Foundation
import PortalAuth

/// What `portal-auth token` does, given its option values: both the ArgumentParser command (`TokenCommand`) and
/// the fast path (`FastCommandLine`) run this, so the store location, the selection, the validity and refresh
/// rule and the printing exist once.
struct TokenInvocation {
    var selection: SelectionArguments
    var minValid = 300
    var format: TokenFormat = .plain
    var idToken = false
    /// `--proxy-token`: for an IAP sign-in, print the token sent to the hosts behind the proxy, of this kind.
    var proxyToken: ProxyTokenChoice?
    var headerName: String?
    var interactive = false
    /// The token the sign-in sends to what it covers, whatever the selection (an agent's request for `exec`).
    var forHosts = false
    /// Whether a refresh watches Ctrl-C and SIGTERM itself (a command); the agent watches the signals once for the
    /// whole process and waits for its requests in progress when it stops, so its requests start no watcher (a
    /// thread, a pipe and process-wide signal actions set and restored per refresh).
    var watchesInterrupts = true
    var session: SessionArguments
    /// The command line that printed commands repeat (with `--interactive`): this process's, or for a request to
    /// the agent, the `token` command that asks the same (none for `exec`'s, which has no `--interactive`).
    var arguments = Array(CommandLine.arguments.dropFirst())

    /// Checks this command's own options (the selection and session values are checked by their own types,
    /// as ArgumentParser does for option groups); throws the `ValidationError` the command reports.
    func validate() throws {
        guard minValid >= 0 else { throw ValidationError("--min-valid must be 0 or more seconds, not \(minValid)") }
        if let headerName, !TransportHeaders.isFieldName(headerName) {
            throw ValidationError(
                "--header-name" + MessagePart.given(" \"", DisplayText.path(headerName), "\"")
                    + " is not an HTTP header name: "
                    + "letters, digits and !#$%&'*+-.^_`|~ only (RFC 9110 §5.6.2)")
        }
        if headerName != nil && format != .header { throw ValidationError("--header-name goes with --format header") }
        if idToken && proxyToken != nil { throw ValidationError("give --id-token or --proxy-token, not both") }
        _ = try ProxyTokenChoice.resolved(proxyToken)
    }

    /// Prints the token (or reports the failure and throws its `ExitCode`): the agent's when one serves (see
    /// `AgentAsk`; not with `--interactive`, which may sign in here), else the store's.
    func run() async throws {
        do {
            let fromAgent = interactive ? nil : try AgentAsk.token(agentRequest, session: session, wakingPromptly: true)
            let issued: IssuedToken
            if let fromAgent { issued = fromAgent } else { issued = try await obtain() }
            try print(issued)
        } catch {
            throw Failure.report(session.terminalNeeded(error))
        }
    }

    // MARK: - Getting the token

    /// What the agent is asked for this command line (the proxy-token choice of `PORTAL_AUTH_PROXY_TOKEN` resolved
    /// here, in the caller's environment).
    var agentRequest: AgentTokenRequest {
        AgentTokenRequest(
            selection: selection.target, minValid: minValid, idToken: idToken,
            proxyToken: ((try? ProxyTokenChoice.override(proxyToken)) ?? nil)?.token, forHosts: forHosts)
    }

    /// The token, without printing it (the agent answers with it).
    func obtain() async throws -> IssuedToken {
        let store = try session.credentialStore()
        let target = selection.target
        guard let credential = try await SelectedCredential.find(target, in: store, storeOption: session.store) else {
            // The preferences (the app remembered for the portal) only shape the commands a failure suggests.
            let preferences = try store.preferences()
            let needed = SignInNeeded(
                reason: Self.nothingStored(for: target),
                command: SelectedCredential.signInCommand(for: target, store: session.store, preferences: preferences),
                interactiveCommand: Self.interactiveCommand(
                    for: target, preferences: preferences, credentialStored: false, arguments: arguments))
            guard interactive else { throw needed }
            return try await token(from: signIn(target, replacing: nil, store: store, preferences: preferences))
        }
        do {
            return try await token(from: credential)
        } catch let error as CredentialError where error.requiresSignIn {
            let preferences = try store.preferences()
            guard interactive else {
                throw SignInNeeded(
                    reason: "\(error)", command: credential.signInCommand(store: session.store),
                    interactiveCommand: Self.interactiveCommand(
                        for: target, preferences: preferences, credentialStored: true, arguments: arguments))
            }
            StandardError.line("portal-auth: \(error); signing in again.")
            return try await token(from: signIn(target, replacing: credential, store: store, preferences: preferences))
        }
    }

    /// This command line again with `--interactive` (and the client ID remembered for the portal when it lacks
    /// one), or nil when `--interactive` could not sign in from it: nothing stored and no portal app or IAP file
    /// named.
    static func interactiveCommand(
        for target: CredentialSelection.Target, preferences: SignInPreferences, credentialStored: Bool,
        arguments: [String] = Array(CommandLine.arguments.dropFirst())
    ) -> String? {
        guard !arguments.isEmpty else { return nil }
        var extra: [String] = []
        if !credentialStored {
            switch target {
            case .portal(let url, let clientID):
                guard clientID == nil else { break }
                guard let app = preferences.app(for: url) else { return nil }
                extra = ["--client-id", app.clientID]
            case .iap: break
            case .url, .name, .automatic: return nil
            }
        }
        return ShellWord.command(["portal-auth"] + arguments + extra + ["--interactive"])
    }

    private func token(from credential: SelectedCredential) async throws -> IssuedToken {
        if idToken, case .portal = credential {
            throw UsageProblem(
                description:
                    "--id-token: \(credential.target) is a portal sign-in, which has no ID token; it is for IAP sign-ins"
            )
        }
        // Ctrl-C and SIGTERM cancel the work instead of killing the process: a refresh already sent is then
        // still stored (a rotated refresh token is not lost), and the port or lock is released.
        let (minValid, idToken) = (self.minValid, self.idToken)
        // `--url` names a host to call: an IAP sign-in then gives the token `request` sends there (the ID token
        // unless --proxy-token access, or the choice stored with the sign-in); so does --proxy-token with any selection.
        var sendsToHosts = false
        var hostsChoice: ProxyTokenChoice? = nil
        if !idToken, case .iap = credential {
            if self.forHosts {
                sendsToHosts = true
                hostsChoice = proxyToken
            } else if case .url = selection.target {
                sendsToHosts = true
                hostsChoice = (try? ProxyTokenChoice.override(proxyToken)) ?? nil
            } else if let proxyToken {
                sendsToHosts = true
                hostsChoice = proxyToken
            }
        }
        let issued: IssuedToken
        if !sendsToHosts && credential.holdsFreshToken(minimumValidity: .seconds(minValid), idToken: idToken) {
            // The stored token as it is: nothing to cancel, so no signal watcher (a thread and a pipe) is started.
            issued = try await credential.token(minimumValidity: .seconds(minValid), force: false, idToken: idToken)
        } else {
            let refresh: @Sendable () async throws -> IssuedToken = { [sendsToHosts, hostsChoice] in
                if sendsToHosts {
                    return try await credential.tokenForHosts(minimumValidity: .seconds(minValid), choice: hostsChoice)
                }
                return try await credential.token(minimumValidity: .seconds(minValid), force: false, idToken: idToken)
            }
            issued = try await watchesInterrupts ? Failure.cancellableOnInterrupt(refresh) : refresh()
        }
        await credential.warnOnceAboutShortLifetime(of: issued, minValid: minValid)
        return issued
    }

    /// "no stored sign-in for the portal https://… with client ID abc", "… covers https://…".
    static func nothingStored(for target: CredentialSelection.Target) -> String {
        switch target {
        case .portal(let url, let clientID):
            return "no stored sign-in for the portal \(url.absoluteString)"
                + (clientID.map { " with client ID \($0)" } ?? "")
        case .iap(let file): return "no stored sign-in for the IAP configuration \(DisplayText.path(file.path))"
        case .url(let url): return "no stored portal or IAP sign-in covers \(url.absoluteString)"
        case .name(let name): return "the sign-in named \(name) is no longer stored"
        case .automatic: return "no portal or IAP sign-in is stored"
        }
    }

    // MARK: - Interactive sign-in

    /// Signs in through the browser for `target` (or again for `previous`) and stores the credential.
    private func signIn(
        _ target: CredentialSelection.Target, replacing previous: SelectedCredential?, store: ArcGISCredentialStore,
        preferences: SignInPreferences
    ) async throws -> SelectedCredential {
        let signedIn: SelectedCredential
        switch (previous, target) {
        case (.portal(let old)?, _):
            signedIn = try await signInToPortal(old.configuration)
        case (.iap(let old, let file)?, _):
            // Reload the file when there is one: the stored copy lacks the prompt type.
            var configuration = old.configuration
            if let file { configuration = try await IAPConfiguration.configuration(from: URL(fileURLWithPath: file)) }
            signedIn = try await signInToIAP(configuration, replacing: old)
        case (nil, .portal(let url, let clientID)):
            // The app signed in to this portal before (kept after `revoke`) when no client ID is given.
            guard
                let app = preferences.app(for: url, clientID: clientID)
                    ?? clientID.map({ .init(portalURL: url, clientID: $0, redirectURL: nil) })
            else {
                throw UsageProblem(
                    description:
                        "--interactive: nothing is stored for \(url.absoluteString) and no app was signed in to it "
                        + "here before; add --client-id with the client ID of the app registered in the portal")
            }
            signedIn = try await signInToPortal(
                OAuthUserConfiguration(
                    portalURL: OAuthUserConfiguration.normalizedPortalURL(url), clientID: app.clientID,
                    redirectURL: app.redirectURL ?? OAuthUserConfiguration.defaultRedirectURL))
        case (nil, .iap(let file)):
            let configuration = try await IAPConfiguration.configuration(from: file)
            signedIn = try await signInToIAP(configuration, replacing: store.previousIAPSignIn(for: configuration))
        case (nil, .url), (nil, .name), (nil, .automatic):
            throw SignInNeeded(reason: Self.nothingStored(for: target), command: nil)
        }
        switch signedIn {
        case .portal(let credential): try await add(credential, to: store)
        case .iap(let credential, _): try await add(credential, to: store)
        }
        return signedIn
    }

    private func signInToPortal(_ configuration: OAuthUserConfiguration) async throws -> SelectedCredential {
        try configuration.validate()
        let settings = session.signInSettings(target: "the portal \(configuration.portalURL.absoluteString)")
        let credential = try await Failure.cancellableOnInterrupt {
            try await OAuthUserCredential.credential(for: configuration, settings: settings)
        }
        return .portal(credential)
    }

    private func signInToIAP(_ configuration: IAPConfiguration, replacing previous: IAPCredential?) async throws
        -> SelectedCredential
    {
        let settings = session.signInSettings(
            target: "the identity provider at \(configuration.authorizeURL.host ?? "?")")
        let credential = try await Failure.cancellableOnInterrupt {
            try await IAPCredential.credential(for: configuration, settings: settings, replacing: previous)
        }
        return .iap(credential, configurationFile: configuration.sourceFile?.path)
    }

    private func add(_ credential: ArcGISCredential, to store: ArcGISCredentialStore) async throws {
        try await store.keepSignIn(credential)
        StandardError.line(
            "Signed in\(credential.username.map { " as \(DisplayText.neutralised($0, limit: 200))" } ?? "") to \(credential.targetDescription); stored in \(store.tokensPlace)."
        )
    }

    // MARK: - Printing

    private func print(_ issued: IssuedToken) throws {
        try Self.print(issued, format: format, headerName: headerName)
    }

    /// Prints `issued` in `format` on stdout (the only place `token` and `refresh` write a token).
    static func print(_ issued: IssuedToken, format: TokenFormat, headerName: String?) throws {
        // A stored token from before tokens were checked on entry: a CR LF would print a second header line.
        if let problem = TokenCharacters.problem(inToken: issued.value) {
            throw InputError(
                category: .invalidContent,
                description: "the stored token for \(issued.target) cannot be printed: \(problem). Sign in again.")
        }
        switch format {
        case .plain:
            Output.result(issued.value)
        case .header:
            let name = headerName ?? (issued.kind == .oauthUser ? "X-Esri-Authorization" : "Authorization")
            Output.result("\(name): Bearer \(issued.value)")
        case .json:
            Output.json(issued.json())
        }
    }
}
