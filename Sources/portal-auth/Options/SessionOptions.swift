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

    /// The values, for `SessionArguments` (which the fast path of `token` and `refresh` fills in too).
    var arguments: SessionArguments {
        SessionArguments(
            browserCommand: browserCommand, noBrowser: noBrowser, forceBrowser: forceBrowser, deviceCode: deviceCode,
            timeout: timeout, store: store, caBundle: transport.caBundle)
    }

    func validate() throws {
        var own = arguments
        own.caBundle = nil  // TransportOptions validates its own option
        try own.validate()
    }

    /// See `SessionArguments.httpClient`.
    var httpClient: CurlHTTPClient { arguments.httpClient }

    /// See `SessionArguments.signInMethod`.
    var signInMethod: SignInMethod { arguments.signInMethod }

    /// See `SessionArguments.signInSettings(target:)`.
    func signInSettings(target: String) -> SignInSettings { arguments.signInSettings(target: target) }

    /// See `SessionArguments.terminalNeeded(_:)`.
    func terminalNeeded(_ error: any Error) -> any Error { arguments.terminalNeeded(error) }

    /// See `SessionArguments.storeFile()` (the keyring or the file).
    func storeFile() throws -> CredentialStoreFile { try arguments.storeFile() }

    /// See `SessionArguments.credentialStore(settings:forSignIn:)`.
    func credentialStore(settings: SignInSettings? = nil, forSignIn: Bool = false) throws -> ArcGISCredentialStore {
        try arguments.credentialStore(settings: settings, forSignIn: forSignIn)
    }
}
