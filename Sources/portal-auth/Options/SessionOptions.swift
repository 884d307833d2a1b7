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
        browser.choice.fill(&arguments)
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
