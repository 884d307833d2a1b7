import Foundation
import Synchronization
import Testing
@testable import PortalAuth

/// `AuthenticationManager.data(for:)` and the `Authenticator` against the bundled server and the real browser:
/// each challenge raised by the server, answered, and the retry accepted.
@Suite("Challenges against the real server", .serialized, .enabled(if: TestServer.isConfigured))
struct ChallengeIntegrationTests {
    /// Sign-in settings that open the test browser (named, so forced, as `--browser-command` does: the test machine
    /// has no display).
    static func settings(_ server: TestServer) -> SignInSettings {
        SignInSettings(
            browser: CommandBrowserOpener(command: server.browser), timeout: .seconds(90), signInMethod: .browser)
    }

    static func portalSelf(_ server: TestServer) -> URL {
        URL(string: "\(server.portal)/sharing/rest/portals/self?f=json")!
    }

    static func username(in response: TransportResponse) throws -> String? {
        try JSONValue.parse(response.body)["user"]?["username"]?.stringValue
    }

    @Test("499 answered by the OAuth browser sign-in; after the server expires the token, 498 is answered by a refresh")
    func oauthThenRefresh() async throws {
        let server = try TestServer.current()
        let control = try await TestControl.prepared()
        let manager = AuthenticationManager()
        let authenticator = Authenticator(signInSettings: Self.settings(server))
        authenticator.oAuthUserConfigurations = [
            OAuthUserConfiguration(portalURL: URL(string: server.portal)!, clientID: server.clientID)
        ]
        manager.handleChallenges(using: authenticator)

        let first = try await manager.data(for: .get(Self.portalSelf(server)))
        #expect(try Self.username(in: first) == "alice")
        let credential = try #require(manager.arcGISCredentialStore.credentials.first as? OAuthUserCredential)
        let before = try await credential.tokenInfo.accessToken

        try await control.resetStats()
        try await control.expireAccessTokens()
        // The token has not expired locally: it is sent, refused with 498, refreshed once and sent again.
        let second = try await manager.data(for: .get(URL(string: "\(server.portal)/rest/services?f=json")!))
        #expect(second.statusCode == 200)
        #expect(try JSONValue.parse(second.body)["error"] == nil)
        let stats = try await control.stats()
        #expect(stats.refreshes == 1)
        #expect(stats.byGrant["authorization_code"] == nil, "no new browser sign-in")
        #expect(try await credential.tokenInfo.accessToken != before)
    }

    @Test(
        "an IAP-protected host is answered by the IAP sign-in, whether it answers 401 or redirects",
        arguments: [true, false])
    func iap(acceptsJSON: Bool) async throws {
        let server = try TestServer.current()
        let manager = AuthenticationManager()
        let authenticator = Authenticator(signInSettings: Self.settings(server))
        authenticator.iapConfigurations = [
            try await IAPConfiguration.configuration(from: URL(fileURLWithPath: server.iapConfig))
        ]
        manager.handleChallenges(using: authenticator)
        var request = TransportRequest(url: URL(string: server.iapURL)!)
        if acceptsJSON { request.headers.add(name: "Accept", value: "application/json") }
        let response = try await manager.data(for: request)
        #expect(response.statusCode == 200)
        #expect(try JSONValue.parse(response.body)["user"]?.stringValue == "alice")
        #expect(manager.arcGISCredentialStore.credentials.first is IAPCredential)
    }

    @Test(
        "a token challenge answered through the prompt: a wrong password is asked again, the right one generates a token"
    )
    func generateTokenThroughPrompt() async throws {
        let server = try TestServer.current()
        let manager = AuthenticationManager()
        let prompt = PromptedLogins([
            LoginAnswer(username: "alice", password: "not-alices-password"),
            LoginAnswer(username: "alice", password: try server.password),
        ])
        manager.handleChallenges(using: Authenticator(prompt: prompt, signInSettings: nil))
        let response = try await manager.data(for: .get(Self.portalSelf(server)))
        #expect(try Self.username(in: response) == "alice")
        #expect(prompt.failures.count == 2)
        #expect(prompt.failures[1]?.contains("Unable to generate token.") == true)
        #expect(manager.arcGISCredentialStore.credentials.first is TokenCredential)
    }

    @Test("only wrong passwords: the refusal is the request's error, without the password")
    func generateTokenRefused() async throws {
        let server = try TestServer.current()
        let manager = AuthenticationManager()
        let prompt = PromptedLogins(
            Array(repeating: LoginAnswer(username: "alice", password: "not-alices-password"), count: 3))
        manager.handleChallenges(using: Authenticator(prompt: prompt, signInSettings: nil))
        let error = try await #require(throws: TokenServiceError.self) {
            try await manager.data(for: .get(Self.portalSelf(server)))
        }
        #expect(error.kind == .credentialsRefused)
        #expect(!error.description.contains("not-alices-password"))
    }

    @Test("a handler answering with an application credential (client credentials grant)")
    func applicationCredential() async throws {
        let server = try TestServer.current()
        let manager = AuthenticationManager()
        let secret = try server.appSecret
        let appClientID = server.appClientID
        manager.arcGISAuthenticationChallengeHandler = ApplicationHandler {
            try await OAuthApplicationCredential.credential(
                for: URL(string: server.portal)!, clientID: appClientID, clientSecret: secret)
        }
        let response = try await manager.data(for: .get(Self.portalSelf(server)))
        #expect(try JSONValue.parse(response.body)["appInfo"]?["appId"]?.stringValue == appClientID)
    }
}

/// A prompt with scripted logins that records the failure shown before each question.
final class PromptedLogins: AuthenticatorPrompt {
    private let answers: Mutex<[LoginAnswer]>
    private let shown = Mutex<[String?]>([])
    init(_ answers: [LoginAnswer]) { self.answers = Mutex(answers) }
    var canPrompt: Bool { true }
    var failures: [String?] { shown.withLock { $0 } }
    func login(_ request: LoginRequest) async throws -> LoginAnswer? {
        shown.withLock { $0.append(request.previousFailure) }
        return answers.withLock { $0.isEmpty ? nil : $0.removeFirst() }
    }
    func shouldTrust(_ certificate: CertificateInfo, for space: ProtectionSpace) async throws -> Bool { false }
    func clientCertificate(for space: ProtectionSpace, previousFailure: String?) async throws
        -> ClientCertificateAnswer?
    { nil }
}

/// A handler that answers every ArcGIS challenge with the credential `make` gives.
struct ApplicationHandler: ArcGISAuthenticationChallengeHandler {
    let make: @Sendable () async throws -> ArcGISCredential
    func handleArcGISAuthenticationChallenge(_ challenge: ArcGISAuthenticationChallenge) async throws
        -> ArcGISAuthenticationChallenge.Disposition
    {
        .continueWithCredential(try await make())
    }
}
