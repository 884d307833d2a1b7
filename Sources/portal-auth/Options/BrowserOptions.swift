import ArgumentParser
import Foundation
import PortalAuth

/// Options of the commands that may open a browser to sign in (`login`, `iap login`, `token --interactive`, …).
///
/// Differs from the logout's (`LogoutOptions`): worded for the sign-in URL, and `--device-code` besides.
struct BrowserOptions: ParsableArguments {
    @OptionGroup var choice: BrowserChoiceOptions<SignInPage>

    @Flag(
        name: .customLong("device-code"),
        help:
            "Sign in with a code entered on a verification page from any device (IAP identity providers that offer the device authorization grant)."
    )
    var deviceCode = false

    var browserCommand: String? { choice.browserCommand }
    var noBrowser: Bool { choice.noBrowser }
    var forceBrowser: Bool { choice.forceBrowser }

    /// The values, for the rules in `SessionArguments`.
    var arguments: SessionArguments {
        var arguments = SessionArguments()
        choice.fill(&arguments)
        arguments.deviceCode = deviceCode
        return arguments
    }

    func validate() throws {
        try arguments.validateBrowserChoice()
    }

    /// See `SessionArguments.signInMethod`.
    var signInMethod: SignInMethod { arguments.signInMethod }
}

/// The browser choice of every command that opens a page of the identity provider (`--browser-command`,
/// `--no-browser`, `--browser`), its help worded by `Page` for what the browser opens. The options that hold it
/// check it with the rest of their browser values (`SessionArguments.validateBrowserChoice()`).
struct BrowserChoiceOptions<Page: BrowserPage>: ParsableArguments {
    @Option(name: .customLong("browser-command"), help: Page.browserCommandHelp)
    var browserCommand: String?

    @Flag(name: .customLong("no-browser"), help: Page.noBrowserHelp)
    var noBrowser = false

    @Flag(name: .customLong("browser"), help: Page.forceBrowserHelp)
    var forceBrowser = false

    /// Sets these values in `arguments`.
    func fill(_ arguments: inout SessionArguments) {
        arguments.browserCommand = browserCommand
        arguments.noBrowser = noBrowser
        arguments.forceBrowser = forceBrowser
    }
}

/// What the browser of a command opens, and so how its browser options read in the help.
protocol BrowserPage {
    /// The help of `--browser-command`.
    static var browserCommandHelp: ArgumentHelp { get }
    /// The help of `--no-browser`.
    static var noBrowserHelp: ArgumentHelp { get }
    /// The help of `--browser`.
    static var forceBrowserHelp: ArgumentHelp { get }
}

/// The sign-in URL: a browser that fails (or none) falls back to the device code or paste-back.
enum SignInPage: BrowserPage {
    static let browserCommandHelp = ArgumentHelp(
        "Command that opens the sign-in URL (the URL is appended, or replaces a %s word).",
        discussion:
            "Default: $BROWSER, else on WSL wslview or the Windows default browser (cmd.exe, powershell.exe), else xdg-open. A command named here or in $BROWSER, and the Windows browser on WSL, is started even without a display; when it fails, the sign-in takes the remote path at once.",
        valueName: "command")

    static let noBrowserHelp = ArgumentHelp(
        "Do not open a browser: print the URL and, on a terminal, read the address the browser ends on (signing in on another machine)."
    )

    static let forceBrowserHelp = ArgumentHelp(
        "Open the browser even where none seems to be visible (no display, an SSH session).",
        discussion:
            "Without --browser, --no-browser or --device-code the choice is automatic: the browser when there is a display, when $BROWSER is set, or on WSL; else (or when that browser fails) the device code when the identity provider offers one, else paste-back on a terminal."
    )
}

/// The identity provider's logout page: without a browser the logout URL is opened by hand, no device code.
enum LogoutPage: BrowserPage {
    static let browserCommandHelp = ArgumentHelp(
        "Command that opens the identity provider's logout page (the URL is appended, or replaces a %s word).",
        discussion:
            "Default: $BROWSER, else on WSL wslview or the Windows default browser (cmd.exe, powershell.exe), else xdg-open.",
        valueName: "command")

    static let noBrowserHelp = ArgumentHelp(
        "Do not open a browser: print the logout URL and, on a terminal, read the address the browser ends on (signing out on another machine)."
    )

    static let forceBrowserHelp = ArgumentHelp(
        "Open the browser even where none seems to be visible (no display, an SSH session).",
        discussion:
            "Without --browser or --no-browser the choice is automatic: the browser when there is a display, else the logout URL to open by hand (and, on a terminal, the address it ends on pasted back)."
    )
}
