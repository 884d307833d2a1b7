import ArgumentParser
import Foundation
import PortalAuth

/// The values of the session options (`BrowserOptions`, `StoreOptions` and its `TransportOptions`), whichever
/// parser read them, and what the commands make of them: the store, the HTTP client, the sign-in settings.
struct SessionArguments: Equatable {
    var browserCommand: String?
    var noBrowser = false
    var forceBrowser = false
    var deviceCode = false
    var timeout = 300
    var store: String?
    var caBundle: String?
    /// When `--timeout` starts counting: the command's start, or (in the agent) the request's.
    var start = CommandClock.start

    /// Checks the values together; throws the `ValidationError` the command reports.
    func validate() throws {
        try validateBrowserChoice()
        try validateStoreValues()
    }

    /// Checks the browser values (`BrowserOptions`, `LogoutOptions`).
    func validateBrowserChoice() throws {
        let forced = [(forceBrowser, "--browser"), (noBrowser, "--no-browser"), (deviceCode, "--device-code")].filter(
            \.0
        ).map(\.1)
        if forced.count > 1 {
            throw ValidationError("\(forced.joined(separator: " and ")) contradict each other; give one of them")
        }
        if let browserCommand, browserCommand.trimmingCharacters(in: .whitespaces).isEmpty {
            throw ValidationError("--browser-command is empty; give a command such as firefox, or use --no-browser")
        }
    }

    /// Checks the store and transport values (`StoreOptions`; `--ca-bundle` as `TransportOptions` checks it).
    func validateStoreValues() throws {
        guard timeout > 0 else {
            throw ValidationError("--timeout must be a positive number of seconds, not \(timeout)")
        }
        try TransportOptions.validate(caBundle: caBundle)
    }

    /// The HTTP client with the CA bundle setting; no request runs past `--timeout` from the start of the command,
    /// whatever the retries (revocation, refresh, discovery).
    var httpClient: CurlHTTPClient {
        var client = TransportOptions.httpClient(caBundle: caBundle)
        client.configuration.deadline = start + .seconds(timeout)
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
            httpClient: httpClient,
            // Every sign-in of every command (login, token and request --interactive, the authenticator's) takes
            // the same choice: no browser started over SSH or without a display.
            signInMethod: method
        )
    }

    /// Settings for revocations and identity-provider logouts: the browser, the choice of a remote path and the time
    /// limit of these values, a terminal logout observer, the HTTP client with the CA bundle.
    func signOutSettings() -> (settings: SignInSettings, observer: TerminalLogoutObserver) {
        let observer = TerminalLogoutObserver()
        let method = signInMethod
        let settings = SignInSettings(
            browser: noBrowser ? nil : CommandBrowserOpener.systemDefault(override: browserCommand),
            timeout: .seconds(timeout),
            observer: observer,
            // Over SSH or without a display no browser starts: on a terminal the address the browser ends on is
            // pasted back; without one the logout says at once that the browser session stays.
            acceptsPastedRedirect: method != .browser && isatty(0) == 1,
            httpClient: httpClient,
            signInMethod: method
        )
        return (settings, observer)
    }

    /// The error for a sign-in that cannot go on without a terminal, with the command to run on one.
    ///
    /// A sign-in cancelled in the browser (`access_denied`) gets the command that starts it again.
    func terminalNeeded(_ error: any Error) -> any Error {
        let command = ShellWord.command(["portal-auth"] + CommandLine.arguments.dropFirst())
        if let refused = error as? LoopbackError, refused.identityProviderErrorCode == "access_denied" {
            return Advised(error: refused, advice: "To try again:\n    \(command)")
        }
        guard let signIn = error as? SignInError, signIn.needsTerminal else { return error }
        return Advised(error: signIn, advice: "Run this on a terminal:\n    \(command)")
    }

    /// The credential store these options (or `PORTAL_AUTH_STORE`) choose: the keyring or the file.
    func storeFile() throws -> CredentialStoreFile {
        // Every keyring call counts against --timeout too (a hung Secret Service).
        SecretServiceClient.limitCalls(until: start + .seconds(timeout))
        return try CredentialStoreFile.select(store: store, lookup: ProcessEnvironment.value(of:))
    }

    /// The persistent credential store, loaded.
    ///
    /// - Parameter forSignIn: a sign-in may start over when the store is corrupted: the corrupted file is kept
    ///   aside (and reported) when the new sign-in is stored. Other commands report it and stop.
    ///   - settings: how the loaded credentials refresh; by default no browser and the HTTP client of these
    ///     options (so `--ca-bundle` applies to every refresh and revocation).
    func credentialStore(settings: SignInSettings? = nil, forSignIn: Bool = false) throws -> ArcGISCredentialStore {
        let settings = settings ?? SignInSettings(browser: nil, httpClient: httpClient)
        let store = try ArcGISCredentialStore.makePersistent(
            file: storeFile(), settings: settings, startingOverIfCorrupted: forSignIn)
        // Sign-ins kept in a keyring that cannot be reached (cron): say so and stop, rather than "No stored sign-ins";
        // a sign-in may go on (into the file, with --store file).
        if !forSignIn, !store.unreadableEntries.isEmpty,
            let unreachable = store.file?.unreachableKeyringEntries(lookup: ProcessEnvironment.value(of:))
        {
            throw KeyringUnreachable(keys: unreachable.keys, problem: unreachable.problem)
        }
        if !store.unreadableEntries.isEmpty, let problem = store.file?.keyringProblems().values.sorted().first {
            let count = store.unreadableEntries.count
            StandardError.line(
                "portal-auth: warning: \(count) stored sign-in\(count == 1 ? "" : "s") cannot be read now: \(DisplayText.neutralised(ErrorReport.toolWords(problem), limit: 400))"
            )
        }
        return store
    }
}
