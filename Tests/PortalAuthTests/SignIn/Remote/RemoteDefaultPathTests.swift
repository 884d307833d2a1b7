import Foundation
import Synchronization
import Testing
@testable import PortalAuth
import PortalAuthTesting
@testable import PortalAuthStore
@testable import PortalAuthTransport

/// Every path that may open a browser takes the same choice as `login` (issue 28, points 1 and 2): the library's
/// default sign-in (`credential(for:settings:)`, which the `Authenticator` calls) and the IAP logout never start a
/// browser over SSH without a forwarded display; they take a remote path, or fail at once when there is none.
@Suite("Remote path of the default sign-in and of the logout", .serialized, .timeLimit(.minutes(1)))
struct RemoteDefaultPathTests {
    typealias Fakes = SignOutFakes
    static let ssh = SignInEnvironment(hasDisplay: false, isSSHSession: true, hasForwardedDisplay: false)

    @Test("the default sign-in over SSH without a terminal starts no browser and fails at once (portal and IAP)")
    func defaultSignInOverSSH() async throws {
        var provider = FakeIdentityProvider()
        provider.offersDeviceCode = false
        let browser = RecordingBrowserOpener(.succeeds)
        // A long timeout: the old behaviour (the browser, then a wait for a redirect that cannot come) ends only
        // with the suite's time limit, and fails there.
        let settings = SignInSettings(
            browser: browser, timeout: .seconds(600), httpClient: provider.client(), environment: Self.ssh)
        let iapError = await #expect(throws: SignInError.self) {
            try await IAPCredential.credential(for: FakeIdentityProvider.configuration(), settings: settings)
        }
        #expect(iapError?.needsTerminal == true)
        #expect(iapError?.description.contains("SSH session without a forwarded display") == true)
        let portal = OAuthUserConfiguration(portalURL: URL(string: "https://gis.example/portal")!, clientID: "app")
        let portalError = await #expect(throws: SignInError.self) {
            try await OAuthUserCredential.credential(for: portal, settings: settings)
        }
        #expect(portalError?.needsTerminal == true)
        #expect(browser.urls.isEmpty, "no browser started over SSH")
    }

    @Test("the default sign-in follows the settings' method: the device code over SSH where the provider offers it")
    func defaultSignInTakesDeviceCode() async throws {
        var provider = FakeIdentityProvider()
        provider.issuedAt = FakeIdentityProvider.now  // the ID token's iat on the sign-in's (virtual) clock
        let browser = RecordingBrowserOpener(.succeeds)
        let observer = RecordingSignInObserver()
        let settings = SignInSettings(
            browser: browser, observer: observer, httpClient: provider.client(),
            clock: ManualClock(), environment: Self.ssh)
        let credential = try await IAPCredential.credential(
            for: FakeIdentityProvider.configuration(), settings: settings)
        #expect(credential.username == "alice")
        #expect(browser.urls.isEmpty)
        #expect(observer.events.contains("device-code WDJB-MJHT"), "\(observer.events)")

        var forced = settings
        forced.signInMethod = .browser
        forced.environment = SignInEnvironment(hasDisplay: true, isSSHSession: false, hasForwardedDisplay: false)
        forced.timeout = .milliseconds(200)
        _ = try? await IAPCredential.credential(for: FakeIdentityProvider.configuration(), settings: forced)
        #expect(browser.urls.count == 1, "SignInSettings.signInMethod .browser opens the browser")
    }

    @Test(
        "IAP logout over SSH without a terminal: no browser is opened; the sign-in ends here and the result says the browser session stays (issue 45)"
    )
    func logoutOverSSHWithoutTerminal() async throws {
        let browser = Fakes.Browser.redirectingBack()
        let credential = Fakes.iapCredential(http: IAPLogoutTests.plainDiscovery)
        var settings = Fakes.settings(http: IAPLogoutTests.plainDiscovery, browser: browser, timeout: .seconds(600))
        settings.environment = Self.ssh
        let result = try await credential.logOut(settings: settings)
        #expect(browser.urls.isEmpty)
        #expect(!result.isSessionEndConfirmed)
        let skipped = result.browserLogoutSkipped
        #expect(skipped?.contains("SSH") == true, "\(String(describing: skipped))")
        // One sign-out rule (issue 45): what can end without a browser ends, and the credential gives no token.
        await #expect(throws: (any Error).self) { try await credential.tokenInfo }
    }

    @Test("IAP logout over SSH on a terminal: the URL is shown, a wrong paste is explained, the final address confirms")
    func logoutOverSSHPasted() async throws {
        let browser = Fakes.Browser.redirectingBack()
        let credential = Fakes.iapCredential(http: IAPLogoutTests.plainDiscovery)
        let board = RemoteSignInChoiceTests.PasteBoard()
        let observer = RecordingSignInObserver { shown in
            let query = Fakes.query(of: shown)
            board.continuation.yield("\(query["post_logout_redirect_uri"] ?? "")?state=wrong")
            board.continuation.yield("\(query["post_logout_redirect_uri"] ?? "")?state=\(query["state"] ?? "")")
        }
        var settings = Fakes.settings(
            http: IAPLogoutTests.plainDiscovery, browser: browser, timeout: .seconds(600), observer: observer)
        settings.environment = Self.ssh
        settings.acceptsPastedRedirect = true
        settings.pastedLines = { board.stream }
        let result = try await credential.logOut(settings: settings)
        #expect(result.isSessionEndConfirmed)
        #expect(browser.urls.isEmpty)
        let events = observer.events
        #expect(events.first == "no-browser: this is an SSH session without a forwarded display", "\(events)")
        #expect(events.contains("paste-prompt"))
        #expect(events.contains { $0.hasPrefix("paste-rejected:") }, "\(events)")
    }

    @Test("IAP logout over SSH on a terminal: end of input leaves it unconfirmed at once")
    func logoutOverSSHInputClosed() async throws {
        let credential = Fakes.iapCredential(http: IAPLogoutTests.plainDiscovery)
        let board = RemoteSignInChoiceTests.PasteBoard()
        board.continuation.finish()
        var settings = Fakes.settings(
            http: IAPLogoutTests.plainDiscovery, browser: Fakes.Browser(), timeout: .seconds(600))
        settings.environment = Self.ssh
        settings.acceptsPastedRedirect = true
        settings.pastedLines = { board.stream }
        let result = try await credential.logOut(settings: settings)
        #expect(!result.isSessionEndConfirmed)
    }
}

/// The browser pages' last words come from the settings, so a GUI app does not send people to a terminal (issue 28,
/// point 16).
@Suite("Browser pages' words from the settings", .timeLimit(.minutes(1)))
struct BrowserPageWordsTests {
    typealias Fakes = SignOutFakes

    /// A browser that follows the logout back to the loopback and keeps the page it gets.
    final class PageKeeper: Sendable {
        let body = Mutex("")
        func browser(extra: String) -> Fakes.Browser {
            Fakes.Browser { url in
                let query = Fakes.query(of: url)
                guard let redirect = query["post_logout_redirect_uri"], let state = query["state"],
                    let back = URL(string: "\(redirect)?state=\(state)\(extra)"),
                    let response = try? await CurlHTTPClient().send(.get(back))
                else { return }
                self.body.withLock { $0 = String(decoding: response.body, as: UTF8.self) }
            }
        }
    }

    @Test("the success and failure pages end with SignInSettings.pageReturnHint and pageFailureHint")
    func wordsFromSettings() async throws {
        for (extra, expected) in [("", "return to My Maps"), ("&error=access_denied", "My Maps shows what to do next")]
        {
            let keeper = PageKeeper()
            let credential = Fakes.iapCredential(http: IAPLogoutTests.plainDiscovery)
            var settings = Fakes.settings(http: IAPLogoutTests.plainDiscovery, browser: keeper.browser(extra: extra))
            settings.pageReturnHint = "You can close this tab and return to My Maps."
            settings.pageFailureHint = "You can close this tab; My Maps shows what to do next."
            _ = try? await credential.logOut(settings: settings)
            let page = keeper.body.withLock { $0 }
            #expect(page.contains(expected), "\(page)")
            #expect(!page.contains("terminal"), "\(page)")
        }
    }
}
