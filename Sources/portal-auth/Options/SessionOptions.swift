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

    /// Sign-in settings for an interactive sign-in to `target`.
    ///
    /// Pasted addresses are read only from a terminal, and not while a browser is forced (its countdown is drawn).
    func signInSettings(target: String) -> SignInSettings {
        let method = signInMethod
        let acceptsPaste = method != .browser && isatty(0) == 1
        return SignInSettings(
            browser: noBrowser || deviceCode ? nil : CommandBrowserOpener.systemDefault(override: browserCommand),
            timeout: .seconds(timeout),
            observer: TerminalSignInObserver(target: target, waitLimit: .seconds(timeout)),
            acceptsPastedRedirect: acceptsPaste,
            httpClient: httpClient
        )
    }

    /// The error for a sign-in that cannot go on without a terminal, with the command to run on one.
    func terminalNeeded(_ error: any Error) -> any Error {
        guard let signIn = error as? SignInError, signIn.needsTerminal else { return error }
        let command = ShellWord.command(["portal-auth"] + CommandLine.arguments.dropFirst())
        return Advised(error: signIn, advice: "Run this on a terminal:\n    \(command)")
    }

    /// The credential store file these options name.
    func storeFile() throws -> CredentialStoreFile { try storage.storeFile() }

    /// The persistent credential store, loaded (see `StoreOptions.credentialStore(settings:forSignIn:)`).
    func credentialStore(settings: SignInSettings? = nil, forSignIn: Bool = false) throws -> ArcGISCredentialStore {
        try storage.credentialStore(settings: settings, forSignIn: forSignIn)
    }
}
