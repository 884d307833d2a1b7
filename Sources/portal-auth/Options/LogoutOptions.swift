import ArgumentParser
import Foundation
import PortalAuth

/// Options of the commands that end identity-provider sessions in the browser (`iap logout`, `sign-out`): the
/// browser for the logout page and the store — no sign-in options such as `--device-code`, which a logout has no use for.
///
/// Differs from the sign-in's (`BrowserOptions`): worded for the logout page, and no `--device-code`.
struct LogoutOptions: ParsableArguments {
    @OptionGroup(title: "Browser options") var browser: BrowserChoiceOptions<LogoutPage>

    @OptionGroup(title: "Store and network options") var storage: StoreOptions

    var timeout: Int { storage.timeout }

    /// The values, for `SessionArguments`: a logout has no device code.
    private var arguments: SessionArguments {
        var arguments = storage.arguments
        browser.fill(&arguments)
        return arguments
    }

    func validate() throws {
        try arguments.validateBrowserChoice()
    }

    /// See `SessionArguments.signOutSettings()`.
    func signOutSettings() -> (settings: SignInSettings, observer: TerminalLogoutObserver) {
        arguments.signOutSettings()
    }

    /// See `SessionArguments.terminalNeeded(_:)`.
    func terminalNeeded(_ error: any Error) -> any Error { arguments.terminalNeeded(error) }

    /// See `SessionArguments.credentialStore(settings:forSignIn:)`.
    func credentialStore(settings: SignInSettings? = nil) throws -> ArcGISCredentialStore {
        try storage.credentialStore(settings: settings)
    }
}
