import ArgumentParser
import Foundation
import PortalAuth

/// `portal-auth request`: a curl for protected ArcGIS and IAP resources — sends one request with the stored
/// credentials and answers the server's authentication challenges.
struct RequestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "request",
        abstract: "Send a request to a protected ArcGIS or IAP resource, with the stored sign-ins.",
        discussion: """
            Sends the request with the credentials held for its URL: the stored portal or IAP sign-in (refreshed \
            when needed; an ArcGIS token goes as X-Esri-Authorization, an IAP token as Authorization), and answers \
            the server's challenges: ArcGIS errors 499/498, an Identity-Aware Proxy asking for a sign-in, HTTP \
            Basic/Digest, a TLS client certificate, an untrusted certificate. Each challenge is answered once; an \
            expired token is refreshed once first.

            Without --interactive nothing is asked and no browser opens: when a sign-in or a password would be \
            needed, the exit status is 77 and the command to run is printed on standard error. With \
            --interactive an OAuth challenge opens the browser sign-in of a matching --portal/--client-id, an IAP \
            challenge that of a matching --config file, and other challenges ask on the terminal (username and \
            password for an ArcGIS token or HTTP authentication, a .p12/.pfx file for a client certificate). An \
            untrusted server is refused unless --prompt-untrusted lets you inspect and trust its certificate for \
            this run. Portal and IAP sign-ins are kept in the credential store; passwords, certificates and \
            trust decisions never are.

            Hosts behind an Identity-Aware Proxy get the IAP sign-in's ID token as Authorization: Bearer, as the \
            ArcGIS Maps SDK sends it (--proxy-token access, or PORTAL_AUTH_PROXY_TOKEN=access, sends the access \
            token instead). A proxy's sign-in request is never printed as the response: a redirect to an \
            authorization request, to the proxy's sign-in page or to its identity provider, a 401, or a page that \
            posts itself to the identity provider exits 77 with the command that signs in (name the proxy's \
            configuration with --config when no stored sign-in covers the URL). A token the proxy refuses is \
            refreshed once when it is at least a minute old; a fresh token refused exits 65 with the likely causes, \
            whether the host behind the proxy answers 401 or 403 (one rule: signing in again would bring the \
            same kind of token).

            Standard output gets the response body (--format body) or one JSON object with status, headers and \
            body (--format json; Authorization-like headers and cookies are left out). An HTTP 401 or 403 that \
            nothing answered, and a redirect to a sign-in page that names this URL to return to, exit 77 with \
            what is known and print no body: a script never takes a sign-in page for the resource. Other \
            statuses are a success (exit 0; one of 400 or more, or an ArcGIS error, is noted on standard error \
            with --format body), unless --fail is given: then a status of 400 or more exits 22, as curl --fail \
            does, with no body printed (--format json still prints the response object), and so does an ArcGIS \
            error envelope: an HTTP 200 whose JSON body is {"error": {"code": ...}}, how ArcGIS REST services \
            report a failed request (the code and message are printed on standard error).

            Examples:
              portal-auth request \\
                  "https://gis.example.com/portal/sharing/rest/portals/self?f=json"
              portal-auth request --config contoso-iap.json \\
                  --interactive --format json \\
                  "https://maps.contoso.com/portal/sharing/rest/portals/self?f=json"
              portal-auth request --data 'where=1=1&outFields=*&f=json' \\
                  --portal https://gis.example.com/portal \\
                  --client-id abc123 --interactive \\
                  https://gis.example.com/server/rest/services/Roads/FeatureServer/0/query

            Exit status: 0 a response was received; 22 with --fail, an HTTP status of 400 or more or an ArcGIS \
            error envelope; 64 wrong \
            usage; 66 an input file is unreadable; 69 the server is unreachable or its certificate is not \
            trusted; 65 the proxy refused a fresh IAP token (HTTP 401 or 403 alike); 77 a sign-in or credential is needed (or was \
            refused: an HTTP 401 or 403 nothing answered, a redirect to a sign-in page); 130 interrupted.
            """
    )

    @Argument(help: ArgumentHelp("The URL to request (https, or http to a loopback host).", valueName: "url"))
    var url: String

    @Option(
        name: [.customShort("X"), .long],
        help: ArgumentHelp("HTTP method (default GET, or POST with --data/--data-file).", valueName: "method"))
    var method: String?

    @Option(
        name: [.customShort("d"), .long],
        help: ArgumentHelp(
            "Request body, sent as application/x-www-form-urlencoded unless a Content-Type header is given.",
            valueName: "data"))
    var data: String?

    @Option(
        name: .customLong("data-file"),
        help: ArgumentHelp("Read the request body from a file (- for standard input).", valueName: "file"))
    var dataFile: String?

    @Option(
        name: [.customShort("H"), .customLong("header")],
        help: ArgumentHelp("A header field, 'Name: value' (repeatable).", valueName: "header"))
    var headers: [String] = []

    @Option(
        help: ArgumentHelp("Output: body (the response body) or json (status, headers, body).", valueName: "format"))
    var format: ResponseFormat = .body

    @Option(
        name: .customLong("config"),
        help: ArgumentHelp(
            "An IAP configuration file: its hosts are recognised as behind the proxy, and --interactive signs in with it (repeatable).",
            valueName: "file"))
    var iapConfigurations: [String] = []

    @Option(
        help: ArgumentHelp(
            "With --client-id: a portal whose OAuth challenges --interactive answers with a browser sign-in.",
            valueName: "url"))
    var portal: String?

    @Option(
        name: .customLong("client-id"),
        help: ArgumentHelp("With --portal: the app's client ID registered in the portal.", valueName: "id"))
    var clientID: String?

    @Option(name: .customLong("proxy-token"), help: ProxyTokenChoice.help)
    var proxyToken: ProxyTokenChoice?

    @Flag(
        help:
            "Answer challenges: browser sign-ins and questions on the terminal. Without it, exit 77 when one would be needed."
    )
    var interactive = false

    @Flag(
        help:
            "Exit 22 (as curl --fail) on an HTTP status of 400 or more or an ArcGIS error ({\"error\": {\"code\": ...}} in an HTTP 200), printing no body (401 and 403 exit 77 or 65 with or without it)."
    )
    var fail = false

    @Flag(
        name: .customLong("prompt-untrusted"),
        help: "With --interactive: show an untrusted server's certificate and ask whether to trust it for this run.")
    var promptUntrusted = false

    @OptionGroup var session: SessionOptions

    func validate() throws {
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(),
            ["http", "https"].contains(scheme),
            parsed.host?.isEmpty == false
        else {
            throw ValidationError(
                "the URL\(MessagePart.given(" \"", DisplayText.path(url), "\"")) is not an absolute http or https URL; write it like https://gis.example.com/portal/sharing/rest/portals/self?f=json"
            )
        }
        if data != nil && dataFile != nil { throw ValidationError("give --data or --data-file, not both") }
        if let method, method.isEmpty || method.contains(where: { !$0.isLetter }) {
            throw ValidationError(
                "--method\(MessagePart.given(" \"", DisplayText.path(method), "\"")) is not an HTTP method such as GET or POST"
            )
        }
        for header in headers where Self.headerField(header) == nil {
            throw ValidationError(
                "--header\(MessagePart.given(" \"", DisplayText.path(String(header.prefix(40))), "\"")) is not 'Name: value' with a name of letters, digits and !#$%&'*+-.^_`|~ (RFC 9110)"
            )
        }
        if (portal == nil) != (clientID == nil) {
            throw ValidationError("--portal and --client-id go together: they name the OAuth app to sign in with")
        }
        if let portal, URL(string: portal)?.host == nil {
            throw ValidationError(
                "--portal\(MessagePart.given(" \"", DisplayText.path(portal), "\"")) is not an absolute URL; write it like https://gis.example.com/portal"
            )
        }
        if promptUntrusted && !interactive { throw ValidationError("--prompt-untrusted goes with --interactive") }
        _ = try ProxyTokenChoice.resolved(proxyToken)
    }

    /// `Name: value` split at the first colon; nil when the name is not an RFC 9110 token.
    static func headerField(_ text: String) -> (name: String, value: String)? {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let name = text[..<colon].trimmingCharacters(in: .whitespaces)
        guard TransportHeaders.isFieldName(name) else { return nil }
        return (name, text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces))
    }

    // MARK: - Running

    func run() async throws {
        var configurations: [(file: String, configuration: IAPConfiguration)] = []
        let response: TransportResponse
        do {
            for file in iapConfigurations {
                configurations.append(
                    (file, try await IAPConfiguration.configuration(from: URL(fileURLWithPath: file))))
            }
            let request = try buildRequest()
            let iapConfigurations = configurations.map(\.configuration)
            // --proxy-token or $PORTAL_AUTH_PROXY_TOKEN, else each sign-in's stored choice (else the ID token).
            let chosen = try ProxyTokenChoice.override(proxyToken)
            // The agent's tokens when one serves (see `AgentAsk`; not with --interactive, which may sign in here):
            // the store is then the agent's to read and refresh, and this process holds none of it.
            let agent =
                interactive
                ? nil : try AgentAsk.forRequest(request, session: session.arguments, proxyToken: chosen?.token)
            func send(through agent: TokenAgent?) async throws -> TransportResponse {
                let manager = try makeManager(iapConfigurations: iapConfigurations, chosen: chosen, agent: agent)
                return try await Failure.cancellableOnInterrupt { try await manager.data(for: request) }
            }
            do {
                response = try await send(through: agent)
            } catch let error as TokenAgentError where error.isNotServing {
                // Nothing serves on the socket (the agent is first asked before the request is sent): the store,
                // as without an agent.
                response = try await send(through: nil)
            }
        } catch {
            throw Failure.report(session.terminalNeeded(advice(for: error, configurations: configurations)))
        }
        let target = URL(string: url)!
        if let unanswered = UnansweredResponse.detect(in: response, for: target) {
            throw Failure.report(explanation(of: unanswered, configurations: configurations))
        }
        let arcGISError = Self.arcGISError(in: response)
        if fail, response.statusCode >= 400 || arcGISError != nil {
            if format == .json { Output.json(PrintedResponse.json(response)) }
            let message =
                (arcGISError.map { "\($0) in an HTTP \(response.statusCode) answer" } ?? "HTTP \(response.statusCode)")
                + " from \(RedactedURL(response.url))"
                + (format == .json ? " (--fail)" : " (--fail: the body is not printed)")
            StandardError.line("portal-auth: error: \(message)")
            ErrorReport.record(message, category: .unavailable)
            throw ExitCode(ExitStatus.httpError)
        }
        switch format {
        case .body:
            FileHandle.standardOutput.write(response.body)
            // Text that does not end a line would run into the shell prompt; binary bodies stay byte for byte.
            if Self.needsFinalNewline(response.body) { FileHandle.standardOutput.write(Data("\n".utf8)) }
            if response.statusCode >= 400 {
                StandardError.line("portal-auth: note: HTTP \(response.statusCode) from \(RedactedURL(response.url))")
            } else if let arcGISError {
                StandardError.line("portal-auth: note: \(arcGISError) from \(RedactedURL(response.url))")
            }
        case .json:
            Output.json(PrintedResponse.json(response))
        }
    }

    /// "ArcGIS error 400 (Invalid query)" when a success status carries an ArcGIS error envelope
    /// (`{"error": {"code": …}}`, how ArcGIS REST services report a failed request); nil otherwise.
    static func arcGISError(in response: TransportResponse) -> String? {
        // An envelope is small; a large body (a feature query's result) is not parsed for one.
        guard response.statusCode < 400, response.body.count <= 64 * 1024,
            response.body.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) == UInt8(ascii: "{"),
            let envelope = ArcGISErrorEnvelope(body: response.body), let code = envelope.code
        else { return nil }
        return "ArcGIS error \(code)"
            + (envelope.message.map { " (\(DisplayText.neutralised($0, limit: 200)))" } ?? "")
    }

    private func buildRequest() throws -> TransportRequest {
        var request = TransportRequest(url: URL(string: url)!)
        var body: Data?
        if let data { body = Data(data.utf8) }
        if let dataFile {
            if dataFile == "-" {
                body = FileHandle.standardInput.readDataToEndOfFile()
            } else {
                do {
                    body = try Data(contentsOf: URL(fileURLWithPath: dataFile))
                } catch {
                    throw InputError.unreadable(
                        "cannot read the --data-file\(MessagePart.given(" ", DisplayText.path(dataFile))): "
                            + (FileManager.default.fileExists(atPath: dataFile) ? "permission denied" : "no such file"))
                }
            }
        }
        request.method =
            method.map { TransportRequest.Method(rawValue: $0.uppercased()) } ?? (body == nil ? .get : .post)
        request.body = body
        for header in headers {
            if let field = Self.headerField(header) { request.headers.add(name: field.name, value: field.value) }
        }
        if body != nil && !request.headers.contains("Content-Type") {
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        }
        return request
    }

    /// The manager that sends the request: with `agent`, its tokens and no store; else the store's sign-ins.
    private func makeManager(
        iapConfigurations configurations: [IAPConfiguration], chosen: ProxyTokenChoice?, agent: TokenAgent?
    ) throws -> AuthenticationManager {
        let host = URL(string: url)?.host ?? url
        let settings = session.signInSettings(target: host)
        let manager = AuthenticationManager(settings: settings)
        if let agent {
            manager.tokenAgent = agent
        } else {
            manager.arcGISCredentialStore = try session.credentialStore(forSignIn: interactive)
        }
        // Non-interactive: the authenticator asks nothing and signs nothing in, but still knows the IAP hosts.
        let authenticator = Authenticator(
            prompt: interactive ? TerminalAuthenticatorPrompt() : nil, signInSettings: interactive ? settings : nil,
            promptForUntrustedHosts: promptUntrusted)
        // The stored sign-ins' own configurations come after the ones given: a sign-in whose refresh token died
        // is signed in again with the same app registration.
        let stored = manager.arcGISCredentialStore.credentials
        authenticator.iapConfigurations = configurations + stored.compactMap { $0.kind.iap?.configuration }
        authenticator.oAuthUserConfigurations =
            (oauthConfiguration.map { [$0] } ?? [])
            + stored.compactMap { $0.kind.oAuthUser?.configuration }
        // The --config files' hosts are behind a proxy (the stored sign-ins' are known to the manager anyway).
        manager.iapConfigurations = configurations
        for credential in stored {
            if let iap = credential.kind.iap {
                iap.sendToProxyForThisProcess(ProxyTokenChoice.chosen(proxyToken, for: iap).token)
            }
        }
        manager.handleChallenges(using: ProxyTokenChoosingHandler(authenticator: authenticator, token: chosen?.token))
        return manager
    }

    private var oauthConfiguration: OAuthUserConfiguration? {
        guard let portal, let clientID, let portalURL = URL(string: portal) else { return nil }
        return OAuthUserConfiguration(
            portalURL: OAuthUserConfiguration.normalizedPortalURL(portalURL), clientID: clientID)
    }

    // MARK: - What to do next

    /// The error with what to run next: the sign-in command for a challenge nothing answered.
    private func advice(for error: any Error, configurations: [(file: String, configuration: IAPConfiguration)])
        -> any Error
    {
        let target = URL(string: url)!
        let storeWords = session.store.map { ["--store", $0] } ?? []
        if let challenge = error as? AuthenticationChallengeError {
            guard !challenge.credentialWasRefused || challenge.kind == .iapTokenRefused else { return error }
            switch challenge.kind {
            case .tokenRequired, .invalidToken:
                if let oauth = oauthConfiguration, oauth.canBeUsed(for: target), !interactive {
                    let command = ShellWord.command(
                        [
                            "portal-auth", "login", "--portal", oauth.portalURL.absoluteString, "--client-id",
                            oauth.clientID,
                        ] + storeWords)
                    return SignInNeeded(
                        reason: "\(challenge)", command: command, interactiveCommand: Self.again(withInteractive: true),
                        interactiveLead: Self.interactiveLead)
                }
                // The portal and client ID as given (the portal's own when both are known), else their placeholders.
                let portalWords =
                    oauthConfiguration.map {
                        ShellWord.command(["--portal", $0.portalURL.absoluteString, "--client-id", $0.clientID])
                    } ?? "--portal URL --client-id ID"
                let elsewhere =
                    oauthConfiguration.map { oauth in
                        oauth.canBeUsed(for: target)
                            ? ""
                            : " (\(RedactedURL(target)) is not on the portal \(oauth.portalURL.absoluteString): "
                                + "give the portal that serves it)"
                    } ?? ""
                if interactive, let oauth = oauthConfiguration, oauth.canBeUsed(for: target) {
                    return SignInNeeded(
                        reason: "\(challenge)", command: nil,
                        hint:
                            "The browser sign-in with \(portalWords) did not answer it: run again to sign in anew, or "
                            + "check that the server accepts that portal's tokens.")
                }
                return SignInNeeded(
                    reason: "\(challenge)", command: nil,
                    hint: interactive
                        ? "Give \(portalWords) for a browser sign-in\(elsewhere), or a username and password when asked."
                        : "Run again with --interactive (with \(portalWords) for a browser sign-in\(elsewhere), else you are asked for a username and password)."
                )
            case .identityAwareProxy:
                // A stored sign-in whose file now covers the URL but names another provider or client: what differs.
                if let changed = storedIAPChanges.first(where: { $0.change.current.canBeUsed(for: target) }),
                    !interactive
                {
                    let command = ShellWord.command(
                        ["portal-auth", "iap", "login", "--config", changed.file] + storeWords)
                    return SignInNeeded(
                        reason:
                            "\(challenge): the IAP configuration \(DisplayText.path(changed.file)) covers it, but has changed since "
                            + "the sign-in stored for it: " + changed.change.differences.joined(separator: "; "),
                        command: command, interactiveCommand: Self.again(withInteractive: true),
                        interactiveLead: Self.interactiveLead)
                }
                let storedFile = storedIAPFiles.first { $0.configuration.canBeUsed(for: target) }?.file
                if let file = configurations.first(where: { $0.configuration.canBeUsed(for: target) })?.file
                    ?? storedFile
                {
                    let command = ShellWord.command(["portal-auth", "iap", "login", "--config", file] + storeWords)
                    return SignInNeeded(
                        reason: "\(challenge)", command: command,
                        interactiveCommand: Self.again(withInteractive: !interactive),
                        interactiveLead: Self.interactiveLead)
                }
                // Which proxy this is cannot be known here: the command, with the file to name.
                let command = ShellWord.command(["portal-auth", "iap", "login"] + storeWords) + " --config FILE"
                return SignInNeeded(
                    reason: "\(challenge)", command: command,
                    commandLead: "Sign in with the proxy's IAP configuration file as FILE")
            case .iapTokenRefused:
                let other: ProxyTokenChoice = challenge.refusedIAPToken == .accessToken ? .id : .access
                return Advised(
                    error: challenge,
                    advice: "To send \(other.phrase) instead: run again with --proxy-token \(other.rawValue) (or set "
                        + "\(ProxyTokenChoice.environmentVariable)=\(other.rawValue)); for another client ID or scope, correct "
                        + "the IAP configuration file and sign in again with portal-auth iap login --config FILE. "
                        + "`\(ShellWord.command(["portal-auth", "status", "--claims", "--url", url]))` shows the token's audience and scopes."
                )
            default:
                return interactive
                    ? error
                    : SignInNeeded(
                        reason: "\(challenge)", command: nil, hint: "Run again with --interactive to answer it.")
            }
        }
        if let transport = error as? TransportError, transport.kind == .tlsVerificationFailed, !promptUntrusted {
            return Advised(
                error: transport,
                advice:
                    "If you trust this server, run again with --interactive --prompt-untrusted to inspect its certificate."
            )
        }
        return error
    }

    /// What to say of a refusal or sign-in redirect that nothing answered: which stored sign-in's token was refused
    /// and where to read its claims, or, with nothing stored for the URL, the IAP sign-in to run (exit 77 either way).
    private func explanation(
        of unanswered: UnansweredResponse, configurations: [(file: String, configuration: IAPConfiguration)]
    ) -> any Error {
        let target = URL(string: url)!
        let what: String
        switch unanswered {
        case .refused(let status): what = "HTTP \(status) from \(RedactedURL(target))"
        case .signInRedirect(let host):
            what =
                "\(RedactedURL(target)) redirected to a sign-in page at \(DisplayText.neutralised(host, limit: 200)) (it names this URL to return to)"
        }
        let store = try? session.credentialStore(forSignIn: false)
        if let covering = store?.credentials.first(where: {
            $0.canBeUsed(for: target) && ($0.kind.iap != nil || $0.kind.oAuthUser != nil)
        }) {
            var advice =
                "`\(ShellWord.command(["portal-auth", "status", "--claims", "--url", url]))` shows the token's issuer, audience and scopes."
            if let iap = covering.kind.iap {
                let other: ProxyTokenChoice = ProxyTokenChoice.chosen(proxyToken, for: iap) == .access ? .id : .access
                advice += " To send \(other.phrase) instead: --proxy-token \(other.rawValue)."
            }
            return SignInNeeded(
                reason:
                    "\(what), though the token of the stored sign-in for \(covering.targetDescription) was sent: the server does not accept it",
                command: nil,
                hint: advice)
        }
        let storeWords = session.store.map { ["--store", $0] } ?? []
        return SignInNeeded(
            reason: "\(what), and nothing stored answers it",
            command: ShellWord.command(["portal-auth", "iap", "login"] + storeWords) + " --config FILE",
            interactiveCommand: configurations.isEmpty && !interactive
                ? ShellWord.command(["portal-auth"] + CommandLine.arguments.dropFirst())
                    + " --config FILE --interactive" : nil,
            commandLead:
                "If this host is behind an Identity-Aware Proxy, sign in with the proxy's IAP configuration file as FILE",
            interactiveLead: Self.interactiveLead)
    }

    /// The IAP configuration files of the stored sign-ins, with their configurations (for the sign-in command).
    private var storedIAPFiles: [(file: String, configuration: IAPConfiguration)] {
        guard let store = try? session.credentialStore(forSignIn: false) else { return [] }
        return store.credentials.compactMap { credential in
            guard let iap = credential.kind.iap, let file = iap.configuration.sourceFile?.path else { return nil }
            return (file, iap.configuration)
        }
    }

    /// The stored sign-ins whose configuration file now names another provider or client, with the file.
    private var storedIAPChanges: [(file: String, change: IAPCredential.ConfigurationChange)] {
        guard let store = try? session.credentialStore(forSignIn: false) else { return [] }
        return store.credentials.compactMap { credential in
            guard let iap = credential.kind.iap, let change = iap.configurationChange,
                let file = iap.configuration.sourceFile?.path
            else { return nil }
            return (file, change)
        }
    }

    /// This command line again with `--interactive`, ready to paste; nil when not `wanted`.
    /// What `again(withInteractive:)` does, in a message that offers it after the sign-in command.
    static let interactiveLead = "or sign in and make the request at once with"

    static func again(withInteractive wanted: Bool) -> String? {
        wanted ? ShellWord.command(["portal-auth"] + CommandLine.arguments.dropFirst() + ["--interactive"]) : nil
    }

    /// Whether a printed body is text (UTF-8, no NUL) that does not end with a newline.
    static func needsFinalNewline(_ body: Data) -> Bool {
        guard let last = body.last, last != UInt8(ascii: "\n"), !body.contains(0) else { return false }
        return String(data: body, encoding: .utf8) != nil
    }
}
