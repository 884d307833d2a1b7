import Foundation
import Testing
@testable import PortalAuth
import PortalAuthTesting
@testable import PortalAuthStore

/// The device authorization grant (RFC 8628) against a scripted provider, on a virtual clock: polls wait the server's
/// interval, `slow_down` adds 5 s, and pending, denial, expiry and cancellation end the flow as they should.
@Suite("Device code flow")
struct DeviceCodeFlowTests {
    private func settings(
        _ provider: FakeIdentityProvider, clock: ManualClock, observer: RecordingSignInObserver = .init()
    )
        -> (SignInSettings, ScriptedHTTPClient)
    {
        let client = provider.client()
        let settings = SignInSettings(
            browser: nil, observer: observer, httpClient: client, clock: clock,
            environment: SignInEnvironment(hasDisplay: false, isSSHSession: false, hasForwardedDisplay: false))
        return (settings, client)
    }

    private var flow: DeviceCodeFlow {
        DeviceCodeFlow(
            deviceAuthorizationURL: FakeIdentityProvider.deviceURL, tokenURL: FakeIdentityProvider.tokenURL,
            clientID: FakeIdentityProvider.clientID, scopes: ["openid", "profile"])
    }

    @Test("pending polls wait the server's interval, then the tokens come; the requests carry what RFC 8628 asks")
    func pendingThenTokens() async throws {
        var provider = FakeIdentityProvider()
        provider.pollErrors = ["authorization_pending", "authorization_pending"]
        let clock = ManualClock()
        let observer = RecordingSignInObserver()
        let (settings, client) = settings(provider, clock: clock, observer: observer)
        let result = try await flow.run(settings: settings)
        #expect(result.tokens.accessToken == "access-1")
        #expect(clock.sleeps == [.seconds(5), .seconds(5), .seconds(5)])
        #expect(observer.events == ["device-code WDJB-MJHT"])
        let forms = client.forms
        #expect(forms.count == 4)
        #expect(forms[0] == ["client_id": "portal-auth-test", "scope": "openid profile"])
        #expect(
            forms[1] == [
                "grant_type": "urn:ietf:params:oauth:grant-type:device_code", "device_code": "device-secret-123",
                "client_id": "portal-auth-test",
            ])
    }

    @Test("slow_down makes every later poll wait 5 s longer")
    func slowDown() async throws {
        var provider = FakeIdentityProvider()
        provider.interval = 2
        provider.pollErrors = ["authorization_pending", "slow_down", "authorization_pending", "slow_down"]
        let clock = ManualClock()
        let observer = RecordingSignInObserver()
        let (settings, _) = settings(provider, clock: clock, observer: observer)
        _ = try await flow.run(settings: settings)
        #expect(clock.sleeps == [.seconds(2), .seconds(2), .seconds(7), .seconds(7), .seconds(12)])
        #expect(observer.events == ["device-code WDJB-MJHT", "slow-down 7", "slow-down 12"])
    }

    @Test(
        "access_denied and expired_token end the sign-in with their own errors",
        arguments: ["access_denied", "expired_token"])
    func refusals(error: String) async throws {
        var provider = FakeIdentityProvider()
        provider.pollErrors = ["authorization_pending", error]
        let (settings, client) = settings(provider, clock: ManualClock())
        let thrown = await #expect(throws: DeviceCodeError.self) { try await flow.run(settings: settings) }
        #expect(thrown?.isDenied == (error == "access_denied"))
        #expect(thrown?.isExpired == (error == "expired_token"))
        #expect(thrown?.category == (error == "access_denied" ? .refused : .timedOut))
        #expect(client.count == 3, "no poll after the refusal")
        let message = thrown.map { String(describing: $0) } ?? ""
        #expect(!message.isEmpty && !message.contains("device-secret"))
    }

    @Test("the codes' own expiry stops polling even while the server keeps saying pending")
    func localExpiry() async throws {
        var provider = FakeIdentityProvider()
        provider.interval = 4
        provider.expiresIn = 10
        provider.pollErrors = Array(repeating: "authorization_pending", count: 20)
        let clock = ManualClock()
        let (settings, client) = settings(provider, clock: clock)
        let thrown = await #expect(throws: DeviceCodeError.self) { try await flow.run(settings: settings) }
        #expect(thrown?.isExpired == true)
        #expect(clock.sleeps == [.seconds(4), .seconds(4), .seconds(4)])
        #expect(client.count == 3, "the device authorization and two polls; none after the expiry")
    }

    @Test("the sign-in's time limit (--timeout) ends the polling before the codes expire, with no poll after it")
    func timeLimit() async throws {
        var provider = FakeIdentityProvider()
        provider.expiresIn = 600
        provider.pollErrors = Array(repeating: "authorization_pending", count: 20)
        let clock = ManualClock()
        var (settings, client) = settings(provider, clock: clock)
        settings.timeout = .seconds(12)
        let thrown = await #expect(throws: DeviceCodeError.self) { try await flow.run(settings: settings) }
        #expect(thrown?.isTimedOut == true && thrown?.isExpired == false)
        #expect(thrown?.category == .timedOut)
        #expect(thrown.map { String(describing: $0) }?.contains("time limit of 12 s; the code was still valid") == true)
        #expect(
            clock.sleeps == [.seconds(5), .seconds(5), .seconds(2)],
            "waits up to the limit, not a whole interval past it")
        #expect(client.count == 3, "the device authorization and two polls; none after the limit")
    }

    @Test("cancelling the task (Ctrl-C) ends the wait between polls at once, with no further request")
    func cancellation() async throws {
        let provider = FakeIdentityProvider()
        let observer = RecordingSignInObserver()
        let (settings, client) = settings(provider, clock: ManualClock(blocksSleeps: true), observer: observer)
        let flow = self.flow
        let task = Task { try await flow.run(settings: settings) }
        while observer.events.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(client.count == 1, "only the device authorization request was sent")
    }

    @Test("a refused device authorization request reports the provider's error")
    func authorizationRefused() async throws {
        let client = ScriptedHTTPClient([
            ScriptedHTTPClient.json(
                #"{"error":"unauthorized_client","error_description":"no device grant"}"#, status: 400)
        ])
        let settings = SignInSettings(browser: nil, httpClient: client, clock: ManualClock())
        let thrown = await #expect(throws: TokenEndpointError.self) { try await flow.run(settings: settings) }
        #expect(thrown?.errorCode == "unauthorized_client")
    }

    @Test(
        "a wrong client ID at the device authorization endpoint: the message names that endpoint and the client ID (issue 45)",
        arguments: ["invalid_client", "unauthorized_client"])
    func wrongClientID(error: String) async throws {
        let client = ScriptedHTTPClient([ScriptedHTTPClient.json(#"{"error":"\#(error)"}"#, status: 401)])
        let settings = SignInSettings(browser: nil, httpClient: client, clock: ManualClock())
        let thrown = try #require(
            await #expect(throws: TokenEndpointError.self) { try await flow.run(settings: settings) })
        let text = "\(thrown)"
        #expect(text.contains("device authorization endpoint \(FakeIdentityProvider.deviceURL)"), "\(text)")
        #expect(!text.contains("token endpoint") && !text.contains("redirect URL"), "\(text)")
        #expect(text.contains("Check the client ID"), "\(text)")
    }
}
