import ArgumentParser
import Foundation
import PortalAuth

/// Options of the commands that end identity-provider sessions in the browser (`iap logout`, `sign-out`): the
/// browser for the logout page and the store — no sign-in options such as `--device-code`, which a logout has no use for.
struct LogoutOptions: ParsableArguments {
    @OptionGroup(title: "Browser options") var browser: LogoutBrowserOptions

    @OptionGroup(title: "Store and network options") var storage: StoreOptions

    var timeout: Int { storage.timeout }

    /// The values, for `SessionArguments`: a logout has no device code.
    private var arguments: SessionArguments {
        var arguments = storage.arguments
        arguments.browserCommand = browser.browserCommand
        arguments.noBrowser = browser.noBrowser
        arguments.forceBrowser = browser.forceBrowser
        return arguments
    }

    /// Settings for revocations and identity-provider logouts: the browser, the choice of a remote path and the time
    /// limit of these options, a terminal logout observer, the HTTP client with the CA bundle.
    func signOutSettings() -> (settings: SignInSettings, observer: TerminalLogoutObserver) {
        let observer = TerminalLogoutObserver()
        let arguments = self.arguments
        let method = arguments.signInMethod
        let settings = SignInSettings(
            browser: arguments.noBrowser ? nil : CommandBrowserOpener.systemDefault(override: arguments.browserCommand),
            timeout: .seconds(timeout),
            observer: observer,
            // Over SSH or without a display no browser starts: on a terminal the address the browser ends on is
            // pasted back; without one the logout says at once that the browser session stays.
            acceptsPastedRedirect: method != .browser && isatty(0) == 1,
            httpClient: arguments.httpClient,
            signInMethod: method
        )
        return (settings, observer)
    }

    /// See `SessionArguments.terminalNeeded(_:)`.
    func terminalNeeded(_ error: any Error) -> any Error { arguments.terminalNeeded(error) }

    /// See `SessionArguments.credentialStore(settings:forSignIn:)`.
    func credentialStore(settings: SignInSettings? = nil) throws -> ArcGISCredentialStore {
        try storage.credentialStore(settings: settings)
    }
}

/// The browser options of a logout: which browser opens the identity provider's logout page, or none.
struct LogoutBrowserOptions: ParsableArguments {
    @Option(
        name: .customLong("browser-command"),
        help: ArgumentHelp(
            "Command that opens the identity provider's logout page (the URL is appended, or replaces a %s word).",
            discussion:
                "Default: $BROWSER, else on WSL wslview or the Windows default browser (cmd.exe, powershell.exe), else xdg-open.",
            valueName: "command"))
    var browserCommand: String?

    @Flag(
        name: .customLong("no-browser"),
        help:
            "Do not open a browser: print the logout URL and, on a terminal, read the address the browser ends on (signing out on another machine)."
    )
    var noBrowser = false

    @Flag(
        name: .customLong("browser"),
        help: ArgumentHelp(
            "Open the browser even where none seems to be visible (no display, an SSH session).",
            discussion:
                "Without --browser or --no-browser the choice is automatic: the browser when there is a display, else the logout URL to open by hand (and, on a terminal, the address it ends on pasted back)."
        ))
    var forceBrowser = false

    func validate() throws {
        try SessionArguments(
            browserCommand: browserCommand, noBrowser: noBrowser, forceBrowser: forceBrowser, deviceCode: false
        )
        .validateBrowserChoice()
    }
}
