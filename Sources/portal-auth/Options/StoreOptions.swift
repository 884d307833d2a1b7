import ArgumentParser
import Foundation
import PortalAuth

/// Options of every command that uses the credential store without signing in: the store, the time limit and
/// the transport (`status`, `refresh`, `revoke`, `exec`, …). Commands that may open a browser add `BrowserOptions`
/// (together: `SessionOptions`).
struct StoreOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Seconds the command may take from its start, every request and retry included (and the browser, for a command that opens one).",
            valueName: "seconds"))
    var timeout: Int = 300

    @Option(help: Self.storeHelp, completion: .file(extensions: ["json"]))
    var store: String?

    /// The help of `--store`, here and in `StoreChoiceOptions`.
    static let storeHelp = ArgumentHelp(
        "Where credentials live: auto, keyring, file, or a store file's path.",
        discussion: """
            Default: $PORTAL_AUTH_STORE, else auto: the desktop keyring (Secret Service) when one answers and is \
            unlocked, else the file $XDG_STATE_HOME/portal-auth/credentials.json. keyring fails at once (exit 70) \
            when the keyring is absent or locked; a path is a store file there (./keyring for a file named keyring).
            """,
        valueName: "auto|keyring|file|path")

    @OptionGroup var transport: TransportOptions

    /// The values, for `SessionArguments` (which the fast path of `token` and `refresh` fills in too).
    var arguments: SessionArguments {
        SessionArguments(timeout: timeout, store: store, caBundle: transport.caBundle)
    }

    func validate() throws {
        try arguments.validateStoreValues()
    }

    /// See `SessionArguments.httpClient`.
    var httpClient: CurlHTTPClient { arguments.httpClient }

    /// See `SessionArguments.storeFile()` (the keyring or the file).
    func storeFile() throws -> CredentialStoreFile { try arguments.storeFile() }

    /// See `SessionArguments.credentialStore(settings:forSignIn:)`.
    func credentialStore(settings: SignInSettings? = nil, forSignIn: Bool = false) throws -> ArcGISCredentialStore {
        try arguments.credentialStore(settings: settings, forSignIn: forSignIn)
    }
}

/// The store alone, for commands that only read and write the store's index (`use`, `name`): no network, no wait,
/// so no `--timeout` or `--ca-bundle`.
struct StoreChoiceOptions: ParsableArguments {
    @Option(help: StoreOptions.storeHelp, completion: .file(extensions: ["json"]))
    var store: String?

    /// See `SessionArguments.credentialStore(settings:forSignIn:)` (the keyring's calls limited to the default time).
    func credentialStore() throws -> ArcGISCredentialStore {
        try SessionArguments(store: store).credentialStore(settings: nil, forSignIn: false)
    }
}
