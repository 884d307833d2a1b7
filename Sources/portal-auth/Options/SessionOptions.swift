import ArgumentParser
import Foundation
import PortalAuth

/// Options shared by every command that signs in or uses stored credentials.
struct SessionOptions: ParsableArguments {
    @Option(name: .customLong("browser-command"), help: ArgumentHelp(
        "Command that opens the sign-in URL (the URL is appended, or replaces a %s word).",
        discussion: "Default: $BROWSER, else xdg-open.", valueName: "command"))
    var browserCommand: String?

    @Flag(name: .customLong("no-browser"), help: "Do not open a browser: print the URL and, on a terminal, read the address the browser ends on (signing in on another machine).")
    var noBrowser = false

    @Flag(name: .customLong("browser"), help: ArgumentHelp(
        "Open the browser even where none seems to be visible (no display, an SSH session).",
        discussion: "Without --browser, --no-browser or --device-code the choice is automatic: the browser when there is a display, else the device code when the identity provider offers one, else paste-back on a terminal."))
    var forceBrowser = false

    @Flag(name: .customLong("device-code"), help: "Sign in with a code entered on a verification page from any device (IAP identity providers that offer the device authorization grant).")
    var deviceCode = false

    @Option(help: ArgumentHelp("Seconds the command may take: the wait for the browser sign-in, and every request and retry after the start.", valueName: "seconds"))
    var timeout: Int = 300

    @Option(help: ArgumentHelp(
        "Where credentials live: auto, keyring, file, or a store file's path.",
        discussion: """
            Default: $PORTAL_AUTH_STORE, else auto: the desktop keyring (Secret Service) when one answers and is \
            unlocked, else the file $XDG_STATE_HOME/portal-auth/credentials.json. keyring fails at once (exit 70) \
            when the keyring is absent or locked; a path is a store file there (./keyring for a file named keyring).
            """,
        valueName: "auto|keyring|file|path"))
    var store: String?

    @OptionGroup var transport: TransportOptions

    func validate() throws {
        let forced = [(forceBrowser, "--browser"), (noBrowser, "--no-browser"), (deviceCode, "--device-code")].filter(\.0).map(\.1)
        if forced.count > 1 {
            throw ValidationError("\(forced.joined(separator: " and ")) contradict each other; give one of them")
        }
        guard timeout > 0 else { throw ValidationError("--timeout must be a positive number of seconds, not \(timeout)") }
        if let browserCommand, browserCommand.trimmingCharacters(in: .whitespaces).isEmpty {
            throw ValidationError("--browser-command is empty; give a command such as firefox, or use --no-browser")
        }
    }

    /// The HTTP client with the CA bundle setting; no request runs past `--timeout` from the start of the command,
    /// whatever the retries (revocation, refresh, discovery).
    var httpClient: CurlHTTPClient {
        var client = transport.httpClient
        client.configuration.deadline = CommandClock.deadline(seconds: timeout)
        return client
    }

    /// How to sign in: forced by --browser (or a --browser-command), --no-browser or --device-code, else automatic.
    var signInMethod: SignInMethod {
        if deviceCode { return .deviceCode }
        if noBrowser { return .pasteBack }
        if forceBrowser || browserCommand != nil { return .browser }
        return .automatic
    }

    /// Sign-in settings for an interactive sign-in to `target`.
    ///
    /// Pasted addresses are read only from a terminal, and not while a browser is forced (its countdown is drawn).
    func signInSettings(target: String) -> SignInSettings {
        let method = signInMethod
        let acceptsPaste = method != .browser && isatty(0) == 1
        return SignInSettings(
            browser: noBrowser || deviceCode ? nil : CommandBrowserOpener.systemDefault(override: browserCommand),
            timeout: .seconds(timeout),
            observer: TerminalSignInObserver(target: target, waitLimit: .seconds(timeout)),
            acceptsPastedRedirect: acceptsPaste,
            httpClient: httpClient
        )
    }

    /// The error for a sign-in that cannot go on without a terminal, with the command to run on one.
    func terminalNeeded(_ error: any Error) -> any Error {
        guard let signIn = error as? SignInError, signIn.needsTerminal else { return error }
        let command = ShellWord.command(["portal-auth"] + CommandLine.arguments.dropFirst())
        return Advised(error: signIn, advice: "Run this on a terminal:\n    \(command)")
    }

    /// The credential store these options (or `PORTAL_AUTH_STORE`) choose: the keyring or the file.
    func storeFile() throws -> CredentialStoreFile {
        try CredentialStoreFile.select(store: store, environment: ProcessInfo.processInfo.environment)
    }

    /// The persistent credential store, loaded.
    ///
    /// - Parameter forSignIn: a sign-in may start over when the store is corrupted: the corrupted file is kept
    ///   aside (and reported) when the new sign-in is stored. Other commands report it and stop.
    ///   - settings: how the loaded credentials refresh; by default no browser and the HTTP client of these
    ///     options (so `--ca-bundle` applies to every refresh and revocation).
    func credentialStore(settings: SignInSettings? = nil, forSignIn: Bool = false) throws -> ArcGISCredentialStore {
        let settings = settings ?? SignInSettings(browser: nil, httpClient: httpClient)
        let store = try ArcGISCredentialStore.makePersistent(file: storeFile(), settings: settings, startingOverIfCorrupted: forSignIn)
        if !store.unreadableEntries.isEmpty, let problem = store.file?.keyringProblems().values.sorted().first {
            let count = store.unreadableEntries.count
            StandardError.line("portal-auth: warning: \(count) stored sign-in\(count == 1 ? "" : "s") cannot be read now: \(DisplayText.neutralised(problem, limit: 400))")
        }
        return store
    }
}
