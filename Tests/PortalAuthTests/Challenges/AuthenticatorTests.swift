import Foundation
import Testing
@testable import PortalAuth
import PortalAuthTesting
@testable import PortalAuthTransport

@Suite("Authenticator")
struct AuthenticatorTests {
    typealias Fakes = ChallengeFakes

    /// A portal whose generateToken accepts alice's password "right" and whose portals/self accepts its token.
    static func portal() -> ScriptedHTTPClient {
        let clock = ManualClock(start: Date())
        return ScriptedHTTPClient(respond: { request, _ in
            if request.url.path.hasSuffix("/generateToken") {
                guard request.formField("password") == "right" else {
                    return Fakes.answer(
                        #"{"error":{"code":400,"message":"Unable to generate token.","details":["Invalid username or password."]}}"#,
                        to: request)
                }
                return .json(TokenCredentialTests.tokenAnswer("GENERATED", clock: clock), for: request)
            }
            return Fakes.answer(
                Fakes.token(in: request) == "GENERATED" ? #"{"user":{"username":"alice"}}"# : Fakes.tokenEnvelope499,
                to: request)
        })
    }

    @Test("a token challenge asks for a username and password and generates a token; a refused password is asked again")
    func tokenChallenge() async throws {
        let http = Self.portal()
        let manager = AuthenticationManager(settings: SignOutFakes.settings(http: http))
        let prompt = Fakes.Prompt(logins: [
            LoginAnswer(username: "alice", password: "wrong"), LoginAnswer(username: "alice", password: "right"),
        ])
        manager.handleChallenges(using: Authenticator(prompt: prompt, signInSettings: nil))
        let response = try await manager.data(for: .get(Fakes.portalSelf))
        #expect(String(decoding: response.body, as: UTF8.self).contains("alice"))
        #expect(prompt.questions.count == 2)
        #expect(prompt.questions[0] == "login arcGISToken")
        #expect(prompt.questions[1].contains("Unable to generate token."))
        #expect(!prompt.questions[1].contains("wrong"))
        let stored = try #require(manager.arcGISCredentialStore.credentials.first as? TokenCredential)
        #expect(stored.username == "alice")
        #expect(stored.tokenServiceURL.absoluteString == "https://gis.example.com/portal/sharing/rest/generateToken")
    }

    @Test("after the last refused password the refusal is the request's error")
    func tokenChallengeGivesUp() async throws {
        let http = Self.portal()
        let manager = AuthenticationManager(settings: SignOutFakes.settings(http: http))
        let prompt = Fakes.Prompt(logins: Array(repeating: LoginAnswer(username: "alice", password: "wrong"), count: 5))
        manager.handleChallenges(using: Authenticator(prompt: prompt, signInSettings: nil, maximumAttempts: 2))
        let error = try await #require(throws: TokenServiceError.self) {
            try await manager.data(for: .get(Fakes.portalSelf))
        }
        #expect(error.kind == .credentialsRefused)
        #expect(prompt.questions.count == 2)
    }

    @Test(
        "without a terminal nothing is asked: the token challenge fails with an error naming it and saying nobody could be asked"
    )
    func noTerminal() async throws {
        let http = Self.portal()
        let manager = AuthenticationManager(settings: SignOutFakes.settings(http: http))
        let prompt = Fakes.Prompt(canPrompt: false, logins: [LoginAnswer(username: "alice", password: "right")])
        manager.handleChallenges(using: Authenticator(prompt: prompt, signInSettings: nil))
        let error = try await #require(throws: AuthenticationChallengeError.self) {
            try await manager.data(for: .get(Fakes.portalSelf))
        }
        #expect(error.kind == .tokenRequired)
        #expect(error.description.contains("499") && error.description.contains("no terminal"), "\(error)")
        #expect(prompt.questions.isEmpty)

        // prompt: nil never asks, and says nothing of a terminal.
        manager.handleChallenges(using: Authenticator(prompt: nil, signInSettings: nil))
        let silent = try await #require(throws: AuthenticationChallengeError.self) {
            try await manager.data(for: .get(Fakes.portalSelf))
        }
        #expect(!silent.description.contains("no terminal"))
    }

    @Test("without a terminal an HTTP password challenge fails naming it and saying nobody could be asked")
    func noTerminalHTTP() async throws {
        let http = ScriptedHTTPClient(respond: { request, _ in
            Fakes.answer("", status: 401, headers: [("WWW-Authenticate", #"Basic realm="GIS""#)], to: request)
        })
        let manager = AuthenticationManager(settings: SignOutFakes.settings(http: http))
        let prompt = Fakes.Prompt(canPrompt: false, logins: [LoginAnswer(username: "alice", password: "right")])
        manager.handleChallenges(using: Authenticator(prompt: prompt, signInSettings: nil))
        let error = try await #require(throws: AuthenticationChallengeError.self) {
            try await manager.data(for: .get(URL(string: "https://web.example.com/arcgis/rest/info")!))
        }
        #expect(error.kind == .httpAuthentication)
        #expect(error.description.contains("Basic") && error.description.contains("no terminal"), "\(error)")
        #expect(prompt.questions.isEmpty)
    }

    @Test("declining the prompt continues without a credential")
    func declined() async throws {
        let http = Self.portal()
        let manager = AuthenticationManager(settings: SignOutFakes.settings(http: http))
        let prompt = Fakes.Prompt(logins: [nil])
        manager.handleChallenges(using: Authenticator(prompt: prompt, signInSettings: nil))
        await #expect(throws: AuthenticationChallengeError.self) { try await manager.data(for: .get(Fakes.portalSelf)) }
        #expect(prompt.questions.count == 1)
    }

    static let space = ProtectionSpace(host: "web.example.com", port: 443)
    static let url = URL(string: "https://web.example.com/x")!

    @Test(
        "network challenges: Basic/Digest/NTLM ask for a password, Negotiate is rejected, server trust is refused unless enabled",
        .tags(.openssl), ExternalTools.condition)
    func network() async throws {
        let prompt = Fakes.Prompt(logins: [LoginAnswer(username: "u", password: "p")], trusts: true)
        let authenticator = Authenticator(prompt: prompt, signInSettings: nil)
        let error = TransportError(.tlsVerificationFailed, url: RedactedURL(Self.url), detail: "self-signed")
        let basic = await authenticator.handleNetworkAuthenticationChallenge(
            NetworkAuthenticationChallenge(
                kind: .basic, requestURL: Self.url, protectionSpace: Self.space, realm: "r", error: error))
        guard case .continueWithCredential(let credential) = basic else { Issue.record("\(basic)"); return }
        #expect(credential.kind == .password && credential.username == "u")
        let negotiate = await authenticator.handleNetworkAuthenticationChallenge(
            NetworkAuthenticationChallenge(
                kind: .negotiate, requestURL: Self.url, protectionSpace: Self.space, error: error))
        guard case .rejectProtectionSpace = negotiate else { Issue.record("\(negotiate)"); return }

        let certificate = try await TestCertificate.make()
        defer { certificate.remove() }
        let info = try CertificateInfo(pem: String(contentsOf: certificate.certificate, encoding: .utf8))
        let trust = NetworkAuthenticationChallenge(
            kind: .serverTrust, requestURL: Self.url, protectionSpace: Self.space, serverCertificate: info, error: error
        )
        guard case .continueWithoutCredential = await authenticator.handleNetworkAuthenticationChallenge(trust) else {
            Issue.record("server trust must be refused by default"); return
        }
        #expect(!prompt.questions.contains { $0.hasPrefix("trust") }, "not even asked")
        authenticator.promptForUntrustedHosts = true
        guard
            case .continueWithCredential(let trusted) = await authenticator.handleNetworkAuthenticationChallenge(trust)
        else {
            Issue.record("the prompt said yes"); return
        }
        #expect(trusted.kind == .serverTrust)
        #expect(prompt.questions.last == "trust web.example.com:443")
    }

    @Test(
        "client certificate: a file that does not open is reported and asked again", .tags(.openssl),
        ExternalTools.condition)
    func clientCertificate() async throws {
        let identity = try await TestCertificate.make(name: "client")
        defer { identity.remove() }
        let p12 = identity.directory.appendingPathComponent("client.p12")
        try identity.pkcs12(password: "good").write(to: p12)
        let prompt = Fakes.Prompt(certificates: [
            ClientCertificateAnswer(file: p12, password: "bad"), ClientCertificateAnswer(file: p12, password: "good"),
        ])
        let authenticator = Authenticator(prompt: prompt, signInSettings: nil)
        let challenge = NetworkAuthenticationChallenge(
            kind: .clientCertificate, requestURL: Self.url, protectionSpace: Self.space,
            error: AuthenticationChallengeError(.clientCertificate, url: Self.url, statusCode: nil, detail: ""))
        guard
            case .continueWithCredential(let credential) = await authenticator.handleNetworkAuthenticationChallenge(
                challenge)
        else {
            Issue.record("the second answer opens the file"); return
        }
        #expect(credential.kind == .certificate && credential.certificateFile == p12)
        #expect(prompt.questions.count == 2)
        #expect(prompt.questions[1].contains("password does not open"))
        #expect(!prompt.questions[1].contains("bad"))
    }

    @Test("an IAP challenge without a matching configuration continues without a credential")
    func iapWithoutConfiguration() async throws {
        let authenticator = Authenticator(signInSettings: nil)
        let challenge = ArcGISAuthenticationChallenge(
            requestURL: URL(string: "https://other.example.com")!, kind: .iap,
            error: AuthenticationChallengeError(.identityAwareProxy, url: Self.url, statusCode: 401, detail: ""),
            httpClient: Self.portal())
        guard case .continueWithoutCredential = try await authenticator.handleArcGISAuthenticationChallenge(challenge)
        else {
            Issue.record("nothing to sign in with"); return
        }
    }
}
