import ArgumentParser
import Foundation
import PortalAuth

/// Options shared by every command that signs in or may sign in: the browser choice and the store.
struct SessionOptions: ParsableArguments {
    @OptionGroup(title: "Browser options") var browser: BrowserOptions

    @OptionGroup(title: "Store and network options") var storage: StoreOptions

    var browserCommand: String? { browser.browserCommand }
    var noBrowser: Bool { browser.noBrowser }
    var forceBrowser: Bool { browser.forceBrowser }
    var deviceCode: Bool { browser.deviceCode }
    var timeout: Int { storage.timeout }
    var store: String? { storage.store }
    var httpClient: CurlHTTPClient { storage.httpClient }
    var signInMethod: SignInMethod { browser.signInMethod }

    /// The values, for `SessionArguments` (which the fast path of `token` and `refresh` fills in too).
    var arguments: SessionArguments {
        var arguments = storage.arguments
        arguments.browserCommand = browser.browserCommand
        arguments.noBrowser = browser.noBrowser
        arguments.forceBrowser = browser.forceBrowser
        arguments.deviceCode = browser.deviceCode
        return arguments
    }

    /// See `SessionArguments.signInSettings(target:)`.
    func signInSettings(target: String) -> SignInSettings { arguments.signInSettings(target: target) }

    /// See `SessionArguments.terminalNeeded(_:)`.
    func terminalNeeded(_ error: any Error) -> any Error { arguments.terminalNeeded(error) }

    /// The credential store file these options name.
    func storeFile() throws -> CredentialStoreFile { try storage.storeFile() }

    /// The persistent credential store, loaded (see `SessionArguments.credentialStore(settings:forSignIn:)`).
    func credentialStore(settings: SignInSettings? = nil, forSignIn: Bool = false) throws -> ArcGISCredentialStore {
        try storage.credentialStore(settings: settings, forSignIn: forSignIn)
    }
}

extension SessionOptions {
    /// Settings for revocations and identity-provider logouts: the browser, the choice of a remote path and the time
    /// limit of these options, a terminal logout observer, the HTTP client with the CA bundle.
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
}
