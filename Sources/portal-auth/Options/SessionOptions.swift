import ArgumentParser
import Foundation
import PortalAuth

/// Options shared by every command that signs in or uses stored credentials.
struct SessionOptions: ParsableArguments {
    @Option(name: .customLong("browser-command"), help: ArgumentHelp(
        "Command that opens the sign-in URL (the URL is appended, or replaces a %s word).",
        discussion: "Default: $BROWSER, else xdg-open.", valueName: "command"))
    var browserCommand: String?

    @Flag(name: .customLong("no-browser"), help: "Do not open a browser: print the URL (and, on a terminal, accept the final redirect URL pasted back).")
    var noBrowser = false

    @Option(help: ArgumentHelp("Seconds the command may take: the wait for the browser sign-in, and every request and retry after the start.", valueName: "seconds"))
    var timeout: Int = 300

    @Option(help: ArgumentHelp(
        "Credential store file.", discussion: "Default: $PORTAL_AUTH_STORE, else $XDG_STATE_HOME/portal-auth/credentials.json.",
        valueName: "path"))
    var store: String?

    @OptionGroup var transport: TransportOptions

    func validate() throws {
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

    /// Sign-in settings for an interactive sign-in to `target`.
    func signInSettings(target: String) -> SignInSettings {
        let acceptsPaste = noBrowser && isatty(0) == 1
        return SignInSettings(
            browser: noBrowser ? nil : CommandBrowserOpener.systemDefault(override: browserCommand),
            timeout: .seconds(timeout),
            observer: TerminalSignInObserver(target: target, pasteHint: acceptsPaste),
            acceptsPastedRedirect: acceptsPaste,
            httpClient: httpClient
        )
    }

    /// The credential store file these options name.
    func storeFile() throws -> CredentialStoreFile {
        CredentialStoreFile(location: try StoreLocation.resolve(explicitPath: store, environment: ProcessInfo.processInfo.environment))
    }

    /// The persistent credential store, loaded.
    ///
    /// - Parameter forSignIn: a sign-in may start over when the store is corrupted: the corrupted file is kept
    ///   aside (and reported) when the new sign-in is stored. Other commands report it and stop.
    ///   - settings: how the loaded credentials refresh; by default no browser and the HTTP client of these
    ///     options (so `--ca-bundle` applies to every refresh and revocation).
    func credentialStore(settings: SignInSettings? = nil, forSignIn: Bool = false) throws -> ArcGISCredentialStore {
        let settings = settings ?? SignInSettings(browser: nil, httpClient: httpClient)
        return try ArcGISCredentialStore.makePersistent(file: storeFile(), settings: settings, startingOverIfCorrupted: forSignIn)
    }
}
