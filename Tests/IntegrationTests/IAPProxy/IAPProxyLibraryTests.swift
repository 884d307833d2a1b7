import Foundation
import Synchronization
import Testing
@testable import PortalAuth

/// The library through the real Identity-Aware Proxy (issue 23): `AuthenticationManager.data(for:)` with a challenge
/// handler written as for the ArcGIS Maps SDK (it declares no IAP configurations) and with the `Authenticator`,
/// against Apache + mod_auth_openidc protected by the django-oauth-toolkit server (its test browser signs in).
@Suite("IAP proxy (Apache + mod_auth_openidc): the library", .serialized, .enabled(if: IAPProxyServer.isConfigured))
struct IAPProxyLibraryTests {
    static func settings() throws -> SignInSettings {
        // The browser explicitly: the default (`.automatic`) takes the device code where there is no display (CI).
        SignInSettings(
            browser: CommandBrowserOpener(command: try TestServer.current().browser), timeout: .seconds(90),
            signInMethod: .browser)
    }

    /// The proxy's django-oauth-toolkit app and its IAP configuration, an SDK-style handler for it, and a manager
    /// that asks that handler.
    static func portedSetup() async throws -> (
        proxy: IAPProxyServer, provider: IAPProxyServer.Provider, configuration: IAPConfiguration,
        handler: PortedIAPHandler,
        manager: AuthenticationManager
    ) {
        let proxy = try IAPProxyServer.current()
        let provider = try proxy.provider("authserver")
        let configuration = try await IAPConfiguration.configuration(from: URL(fileURLWithPath: provider.config))
        let handler = PortedIAPHandler(configuration: configuration, settings: try settings())
        let manager = AuthenticationManager()
        manager.arcGISAuthenticationChallengeHandler = handler
        return (proxy, provider, configuration, handler, manager)
    }

    /// A GET as a browser-like client sends it (`Accept: */*`): mod_auth_openidc answers a request that accepts only
    /// JSON with 401 instead of its redirect or auto-post page.
    static func get(_ manager: AuthenticationManager, _ url: String) async throws -> (TransportResponse, JSONValue?) {
        var request = TransportRequest(url: URL(string: url)!)
        request.headers.add(name: "Accept", value: "*/*")
        let response = try await manager.data(for: request)
        return (response, try? JSONValue.parse(response.body))
    }

    @Test(
        "an SDK-style handler (no configurations declared) is asked when the proxy redirects to the provider; the ID token is sent, and the stored credential then serves the 401 host"
    )
    func sdkStyleHandler() async throws {
        let (proxy, provider, configuration, handler, manager) = try await Self.portedSetup()

        let (first, answer) = try await Self.get(manager, provider.app + "/auth/data")
        #expect(first.statusCode == 200, "the proxy's 302 is a sign-in request, not the result")
        #expect(answer?["app"]?.stringValue == "iap-backend")
        #expect(answer?["bearer"]?.boolValue == true)
        #expect(
            answer?["claims"]?["aud"]?.stringValue == configuration.clientID,
            "the ID token was sent: \(String(describing: answer))")
        #expect(handler.kinds == [.iap])
        #expect(manager.arcGISCredentialStore.credentials.first is IAPCredential)

        // OIDCUnAuthAction 401 on the same host: the stored credential's token goes with the first request.
        let mark = try proxy.mark()
        let (second, secondAnswer) = try await Self.get(manager, provider.app + "/api/data")
        #expect(second.statusCode == 200)
        #expect(secondAnswer?["user"]?.stringValue != nil && secondAnswer?["user"] == answer?["user"])
        let logged1 = try await proxy.requests(since: mark, hostPrefix: "app.authserver.")
        #expect(logged1.map(\.status) == [200])
        #expect(handler.kinds == [.iap], "not asked again")
    }

    @Test(
        "ported code registers its configuration with the manager: a JSON request's bare 401 from that host asks the SDK-style handler"
    )
    func registeredConfiguration() async throws {
        let (_, provider, configuration, handler, manager) = try await Self.portedSetup()
        manager.iapConfigurations = [configuration]
        // Accept: application/json: mod_auth_openidc answers 401 without WWW-Authenticate, not its redirect.
        let response = try await manager.data(for: .get(URL(string: provider.app + "/auth/data")!))
        #expect(response.statusCode == 200)
        #expect(try JSONValue.parse(response.body)["claims"]?["aud"]?.stringValue == configuration.clientID)
        #expect(handler.kinds == [.iap])
    }

    @Test(
        "tokenSentToProxy = .accessToken: the access token goes, which the access-token host admits; the ID token there is refused as iapTokenRefused without a refresh"
    )
    func accessTokenSent() async throws {
        let (_, provider, _, handler, manager) = try await Self.portedSetup()
        let (signedIn, _) = try await Self.get(manager, provider.app + "/auth/data")
        #expect(signedIn.statusCode == 200)
        let credential = try #require(manager.arcGISCredentialStore.credentials.first as? IAPCredential)

        // The ID token (the default) at the host that takes access tokens: a fresh token refused, no refresh.
        let before = try await credential.tokenInfo(minimumValidity: nil).refreshToken
        let error = await #expect(throws: AuthenticationChallengeError.self) {
            _ = try await manager.data(for: .get(URL(string: provider.access + "/data")!))
        }
        #expect(error?.kind == .iapTokenRefused)
        #expect(error?.refusedIAPToken == .idToken)
        #expect(try await credential.tokenInfo(minimumValidity: nil).refreshToken == before, "no refresh token spent")

        credential.tokenSentToProxy = .accessToken
        let response = try await manager.data(for: .get(URL(string: provider.access + "/data")!))
        #expect(response.statusCode == 200)
        #expect(
            try JSONValue.parse(response.body)["user"]?.stringValue == "alice",
            "django-oauth-toolkit's introspection names the user")
        #expect(handler.kinds == [.iap], "no sign-in asked for")
    }

    @Test(
        "the Authenticator answers the auto-post page, the proxy's own sign-in page and a bare 401 of a configured proxy"
    )
    func authenticator() async throws {
        let proxy = try IAPProxyServer.current()
        let provider = try proxy.provider("authserver")
        let configuration = try await IAPConfiguration.configuration(from: URL(fileURLWithPath: provider.config))

        // The auto-post page (Apache logs it as 401 though the client gets a 200), the proxy's own sign-in page
        // (302 to /signin.html), and OIDCUnAuthAction 401.
        for (url, logged) in [
            (provider.post + "/data", 401), (provider.app + "/portal/data", 302), (provider.app + "/api/data", 401),
        ] {
            let manager = AuthenticationManager()
            let authenticator = Authenticator(signInSettings: try Self.settings())
            authenticator.iapConfigurations = [configuration]
            manager.handleChallenges(using: authenticator)
            let mark = try proxy.mark()
            let (response, answer) = try await Self.get(manager, url)
            #expect(response.statusCode == 200, "\(url)")
            #expect(answer?["app"]?.stringValue == "iap-backend", "\(url): the backend answered, not the proxy's page")
            #expect(answer?["claims"]?["aud"]?.stringValue == configuration.clientID)
            let requests = try await proxy.requests(since: mark, hostPrefix: URL(string: url)!.host!)
            #expect(
                requests.map(\.status) == [logged, 200],
                "the sign-in request, then the request with the token: \(requests)")
            #expect(requests.map(\.bearer) == [false, true])
            #expect(manager.arcGISCredentialStore.credentials.first is IAPCredential)
        }
    }
}

/// An IAP challenge handler as code ported from the ArcGIS Maps SDK writes it: the SDK's one requirement only, an IAP
/// challenge answered with a browser sign-in for the app's configuration.
final class PortedIAPHandler: ArcGISAuthenticationChallengeHandler {
    let configuration: IAPConfiguration
    let settings: SignInSettings
    private let asked = Mutex<[ArcGISAuthenticationChallenge.Kind]>([])

    init(configuration: IAPConfiguration, settings: SignInSettings) {
        self.configuration = configuration
        self.settings = settings
    }

    /// The kinds of the challenges the handler was asked, in order.
    var kinds: [ArcGISAuthenticationChallenge.Kind] { asked.withLock { $0 } }

    func handleArcGISAuthenticationChallenge(_ challenge: ArcGISAuthenticationChallenge) async throws
        -> ArcGISAuthenticationChallenge.Disposition
    {
        asked.withLock { $0.append(challenge.kind) }
        guard challenge.kind == .iap else { return .continueWithoutCredential }
        return .continueWithCredential(try await IAPCredential.credential(for: configuration, settings: settings))
    }
}
