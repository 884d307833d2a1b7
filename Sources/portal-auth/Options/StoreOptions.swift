import ArgumentParser
import Foundation
import PortalAuth

/// Options of every command that uses the credential store without signing in: the store, the time limit and
/// the transport (`status`, `refresh`, `revoke`, `exec`, …). Commands that may open a browser add `BrowserOptions`
/// (together: `SessionOptions`).
struct StoreOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Seconds the command may take: the wait for the browser sign-in, and every request and retry after the start.", valueName: "seconds"))
    var timeout: Int = 300

    @Option(help: ArgumentHelp(
        "Where credentials live: auto, keyring, file, or a store file's path.",
        discussion: """
            Default: $PORTAL_AUTH_STORE, else auto: the desktop keyring (Secret Service) when one answers and is \
            unlocked, else the file $XDG_STATE_HOME/portal-auth/credentials.json. keyring fails at once (exit 70) \
            when the keyring is absent or locked; a path is a store file there (./keyring for a file named keyring).
            """,
        valueName: "auto|keyring|file|path"), completion: .file(extensions: ["json"]))
    var store: String?

    @OptionGroup var transport: TransportOptions

    func validate() throws {
        guard timeout > 0 else { throw ValidationError("--timeout must be a positive number of seconds, not \(timeout)") }
    }

    /// The HTTP client with the CA bundle setting; no request runs past `--timeout` from the start of the command,
    /// whatever the retries (revocation, refresh, discovery).
    var httpClient: CurlHTTPClient {
        var client = transport.httpClient
        client.configuration.deadline = CommandClock.deadline(seconds: timeout)
        return client
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
