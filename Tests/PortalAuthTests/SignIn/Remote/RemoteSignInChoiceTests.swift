import Foundation
import Synchronization
import Testing
@testable import PortalAuth
import PortalAuthTesting
@testable import PortalAuthCore
@testable import PortalAuthStore

/// `SignInMethod.automatic` and the forced methods: which path a sign-in takes with and without a display, when the
/// browser command fails, and without a terminal; and that a device-code sign-in is stored like any other.
@Suite("Remote sign-in choice", .serialized)
struct RemoteSignInChoiceTests {
    static let noDisplay = SignInEnvironment(hasDisplay: false, isSSHSession: false, hasForwardedDisplay: false)
    static let desktop = SignInEnvironment(hasDisplay: true, isSSHSession: false, hasForwardedDisplay: false)

    /// Lines to paste, fed by the test; the stream is made once and handed to the flow.
    final class PasteBoard: Sendable {
        let stream: AsyncStream<String>
        let continuation: AsyncStream<String>.Continuation
        init() { (stream, continuation) = AsyncStream.makeStream(of: String.self) }
    }

    @Test(
        "no display: the device code is used without starting the browser; the ID token is checked and the user named")
    func noDisplayUsesDeviceCode() async throws {
        var provider = FakeIdentityProvider()
        provider.pollErrors = ["authorization_pending"]
        provider.issuedAt = FakeIdentityProvider.now
        let browser = RecordingBrowserOpener(.succeeds)
        let observer = RecordingSignInObserver()
        let settings = SignInSettings(
            browser: browser, observer: observer, httpClient: provider.client(),
            clock: ManualClock(), environment: Self.noDisplay)
        let credential = try await IAPCredential.credential(
            for: FakeIdentityProvider.configuration(), using: .automatic, settings: settings)
        #expect(browser.urls.isEmpty)
        #expect(credential.username == "alice")
        let info = try await credential.tokenInfo(minimumValidity: nil)
        #expect(info.refreshToken == "refresh-1")
        #expect(observer.events.first?.hasPrefix("no-browser: there is no display") == true, "\(observer.events)")
        #expect(observer.events.contains("device-code WDJB-MJHT"))
    }

    @Test("a device-code ID token for another audience is refused")
    func wrongAudience() async throws {
        var provider = FakeIdentityProvider()
        provider.audience = "someone-else"
        let settings = SignInSettings(
            browser: nil, observer: RecordingSignInObserver(), httpClient: provider.client(), clock: ManualClock(),
            environment: Self.noDisplay)
        await #expect(throws: IDTokenError.self) {
            try await IAPCredential.credential(
                for: FakeIdentityProvider.configuration(), using: .deviceCode, settings: settings)
        }
    }

    @Test(
        "SignInMethod.deviceCode with the default observer (nobody is shown the code): SignInError at once naming what to set, nothing polled"
    )
    func deviceCodeNobodySees() async throws {
        let clock = ManualClock()
        let settings = SignInSettings(
            browser: nil, httpClient: FakeIdentityProvider().client(), clock: clock, environment: Self.noDisplay)
        let thrown = await #expect(throws: SignInError.self) {
            try await IAPCredential.credential(
                for: FakeIdentityProvider.configuration(), using: .deviceCode, settings: settings)
        }
        #expect(thrown?.needsTerminal == true, "\(String(describing: thrown))")
        #expect(thrown?.category == .usage)
        for name in ["SignInSettings.observer", "deviceCodeIssued"] {
            #expect(thrown?.description.contains(name) == true, "names \(name): \(String(describing: thrown))")
        }
        #expect(clock.sleeps.isEmpty, "no poll was waited for")
    }

    @Test(
        "end of the pasted lines at the paste prompt ends the sign-in at once (paste-back, and after a failed browser command)",
        .timeLimit(.minutes(1)), arguments: [false, true])
    func pastedLinesEnd(afterBrowserFailure: Bool) async throws {
        var provider = FakeIdentityProvider()
        provider.offersDeviceCode = false
        let observer = RecordingSignInObserver()
        let settings = SignInSettings(
            browser: afterBrowserFailure ? RecordingBrowserOpener(.exits(3)) : nil, timeout: .seconds(600),
            observer: observer, acceptsPastedRedirect: true, httpClient: provider.client(),
            environment: afterBrowserFailure ? Self.desktop : Self.noDisplay,
            pastedLines: { AsyncStream { $0.finish() } })
        let thrown = await #expect(throws: SignInError.self) {
            try await IAPCredential.credential(
                for: FakeIdentityProvider.configuration(), using: afterBrowserFailure ? .automatic : .pasteBack,
                settings: settings)
        }
        #expect(thrown?.isInputClosed == true, "\(String(describing: thrown))")
        #expect(thrown?.category == .usage)
        #expect(thrown?.description.contains("SignInSettings.takePastedAddresses(from:)") == true)
    }

    @Test("--device-code against a provider without one says so and what to do instead")
    func notOffered() async throws {
        var provider = FakeIdentityProvider()
        provider.offersDeviceCode = false
        let settings = SignInSettings(browser: nil, httpClient: provider.client(), clock: ManualClock())
        let thrown = await #expect(throws: DeviceCodeError.self) {
            try await IAPCredential.credential(
                for: FakeIdentityProvider.configuration(), using: .deviceCode, settings: settings)
        }
        #expect(thrown?.isNotOffered == true)
        #expect(thrown?.description.contains("deviceAuthorizationURL") == true, "the library names its own API")
    }

    @Test("no display, no device code, no terminal: fails at once, before any browser or listener")
    func noRemotePath() async throws {
        var provider = FakeIdentityProvider()
        provider.offersDeviceCode = false
        let browser = RecordingBrowserOpener(.succeeds)
        // An observer that shows the URL: the failure is the missing terminal, not a sign-in nobody hears of.
        let settings = SignInSettings(
            browser: browser, observer: RecordingSignInObserver(), acceptsPastedRedirect: false,
            httpClient: provider.client(),
            environment: SignInEnvironment(hasDisplay: false, isSSHSession: true, hasForwardedDisplay: false))
        let thrown = await #expect(throws: SignInError.self) {
            try await IAPCredential.credential(
                for: FakeIdentityProvider.configuration(), using: .automatic, settings: settings)
        }
        #expect(thrown?.needsTerminal == true)
        #expect(thrown?.description.contains("SSH session without a forwarded display") == true)
        #expect(browser.urls.isEmpty)
        let portal = OAuthUserConfiguration(portalURL: URL(string: "https://gis.example/portal")!, clientID: "app")
        let portalError = await #expect(throws: SignInError.self) {
            try await OAuthUserCredential.credential(for: portal, using: .automatic, settings: settings)
        }
        #expect(portalError?.needsTerminal == true)
    }

    @Test(
        "a browser command that fails goes straight to paste-back of the URL already shown (no second URL, no waiting for the timeout); the pasted address signs in",
        arguments: [RecordingBrowserOpener.Behaviour.exits(3), .cannotStart])
    func browserFailsThenPaste(behaviour: RecordingBrowserOpener.Behaviour) async throws {
        var provider = FakeIdentityProvider()
        provider.offersDeviceCode = false
        let nonce = FakeIdentityProvider.NonceBox()
        provider.nonce = nonce
        let board = PasteBoard()
        let observer = RecordingSignInObserver { url in
            let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
            nonce.set(items.first { $0.name == "nonce" }?.value)
            let redirect = items.first { $0.name == "redirect_uri" }?.value ?? ""
            let state = items.first { $0.name == "state" }?.value ?? ""
            board.continuation.yield("https://elsewhere.example/callback?code=x&state=\(state)")
            board.continuation.yield("\(redirect)?code=the-code&state=\(state)")
        }
        let browser = RecordingBrowserOpener(behaviour)
        let settings = SignInSettings(
            browser: browser, timeout: .seconds(600), observer: observer, acceptsPastedRedirect: true,
            httpClient: provider.client(), environment: Self.desktop, pastedLines: { board.stream })
        let credential = try await IAPCredential.credential(
            for: FakeIdentityProvider.configuration(), using: .automatic, settings: settings)
        #expect(credential.username == "alice")
        #expect(browser.urls.count == 1, "the browser is tried once")
        let events = observer.events
        #expect(events.first == "browser")
        #expect(events.filter { $0 == "browser" }.count == 1, "one URL shown: \(events)")
        #expect(!events.contains("browser-failed"), "the failure is told once, with the paste request")
        #expect(events.filter { $0.hasPrefix("browser-failed-paste: ") }.count == 1, "\(events)")
        #expect(!events.contains("paste-prompt"), "no fresh URL to open: the one shown stays valid")
        #expect(!events.contains { $0.hasPrefix("no-browser:") })
        #expect(
            events.contains {
                $0.hasPrefix(
                    "paste-rejected: The pasted address is not the awaited sign-in response: it does not start with http://127.0.0.1:"
                )
            })
        #expect(events.last == "exchange")
    }

    @Test("a browser command that fails, with a provider that offers a device code: the device code takes over")
    func browserFailsThenDeviceCode() async throws {
        var provider = FakeIdentityProvider()
        provider.pollErrors = ["authorization_pending"]
        provider.issuedAt = FakeIdentityProvider.now
        let observer = RecordingSignInObserver()
        let browser = RecordingBrowserOpener(.exits(3))
        let settings = SignInSettings(
            browser: browser, observer: observer, acceptsPastedRedirect: true, httpClient: provider.client(),
            clock: ManualClock(), environment: Self.desktop, pastedLines: { AsyncStream { _ in } })
        let credential = try await IAPCredential.credential(
            for: FakeIdentityProvider.configuration(), using: .automatic, settings: settings)
        #expect(credential.username == "alice")
        let events = observer.events
        #expect(events.first == "browser")
        #expect(
            events.contains("no-browser: the browser could not be started (the browser command exited with status 3)"),
            "\(events)")
        #expect(!events.contains { $0.hasPrefix("browser-failed-paste") })
        #expect(events.contains("device-code WDJB-MJHT"))
    }

    @Test("ArcGIS portals have no device code")
    func portalDeviceCode() async throws {
        let portal = OAuthUserConfiguration(portalURL: URL(string: "https://gis.example/portal")!, clientID: "app")
        let thrown = await #expect(throws: SignInError.self) {
            try await OAuthUserCredential.credential(
                for: portal, using: .deviceCode, settings: SignInSettings(browser: nil))
        }
        #expect(thrown?.category == .usage)
    }
}
