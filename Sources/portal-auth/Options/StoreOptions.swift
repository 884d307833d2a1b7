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
        "Credential store file.", discussion: "Default: $PORTAL_AUTH_STORE, else $XDG_STATE_HOME/portal-auth/credentials.json.",
        valueName: "path"), completion: .file(extensions: ["json"]))
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
