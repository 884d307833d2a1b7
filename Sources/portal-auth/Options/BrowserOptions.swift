import ArgumentParser
import Foundation
import PortalAuth

/// Options of the commands that may open a browser to sign in (`login`, `iap login`, `token --interactive`, …).
struct BrowserOptions: ParsableArguments {
    @Option(
        name: .customLong("browser-command"),
        help: ArgumentHelp(
            "Command that opens the sign-in URL (the URL is appended, or replaces a %s word).",
            discussion:
                "Default: $BROWSER, else on WSL wslview or the Windows default browser (cmd.exe, powershell.exe), else xdg-open. A command named here or in $BROWSER, and the Windows browser on WSL, is started even without a display; when it fails, the sign-in takes the remote path at once.",
            valueName: "command"))
    var browserCommand: String?

    @Flag(
        name: .customLong("no-browser"),
        help:
            "Do not open a browser: print the URL and, on a terminal, read the address the browser ends on (signing in on another machine)."
    )
    var noBrowser = false

    @Flag(
        name: .customLong("browser"),
        help: ArgumentHelp(
            "Open the browser even where none seems to be visible (no display, an SSH session).",
            discussion:
                "Without --browser, --no-browser or --device-code the choice is automatic: the browser when there is a display, when $BROWSER is set, or on WSL; else (or when that browser fails) the device code when the identity provider offers one, else paste-back on a terminal."
        ))
    var forceBrowser = false

    @Flag(
        name: .customLong("device-code"),
        help:
            "Sign in with a code entered on a verification page from any device (IAP identity providers that offer the device authorization grant)."
    )
    var deviceCode = false

    /// The values, for the rules in `SessionArguments`.
    private var arguments: SessionArguments {
        SessionArguments(
            browserCommand: browserCommand, noBrowser: noBrowser, forceBrowser: forceBrowser, deviceCode: deviceCode)
    }

    func validate() throws {
        try arguments.validateBrowserChoice()
    }

    /// See `SessionArguments.signInMethod`.
    var signInMethod: SignInMethod { arguments.signInMethod }
}
