import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthCore
@testable import PortalAuthTransport

/// Network challenges against real TLS and HTTP authentication on loopback (`Tests/Fakes/fault_server.py`): the
/// handler is asked, its credential is stored, the retry succeeds.
@Suite("Network challenges over real TLS on loopback", .serialized, .tags(.python, .openssl), ExternalTools.condition)
struct ChallengeTLSTests {
    typealias Fakes = ChallengeFakes

    @Test("a self-signed server is refused by default, and accepted with server trust for its host and port only")
    func serverTrust() async throws {
        let certificate = try await TestCertificate.make()
        defer { certificate.remove() }
        try await FaultServer.with(tls: certificate) { server async throws in
            let manager = AuthenticationManager(settings: SignInSettings(browser: nil))
            // No handler: the verification failure is the error.
            let refused = try await #require(throws: TransportError.self) {
                try await manager.data(for: .get(server.url("/json")))
            }
            #expect(refused.kind == .tlsVerificationFailed)

            // The default authenticator does not trust without being told to prompt.
            manager.handleChallenges(using: Authenticator(prompt: Fakes.Prompt(trusts: true), signInSettings: nil))
            await #expect(throws: TransportError.self) { try await manager.data(for: .get(server.url("/json"))) }

            let handler = Fakes.NetworkHandler { challenge, _ in
                challenge.kind == .serverTrust && challenge.host == "127.0.0.1"
                    ? .continueWithCredential(.serverTrust) : .continueWithoutCredential
            }
            manager.networkAuthenticationChallengeHandler = handler
            #expect(try await manager.data(for: .get(server.url("/json"))).statusCode == 200)
            let challenge = try #require(handler.challenges.first)
            #expect(challenge.kind == .serverTrust)
            #expect(
                challenge.serverCertificate?.sha256Fingerprint
                    == (try CertificateInfo(pem: String(contentsOf: certificate.certificate, encoding: .utf8)))
                    .sha256Fingerprint)
            // Stored: the next request is not challenged.
            #expect(try await manager.data(for: .get(server.url("/json"))).statusCode == 200)
            #expect(handler.challenges.count == 1)
            // Another host name for the same server is another protection space: challenged (and refused) again.
            await #expect(throws: TransportError.self) {
                try await manager.data(for: .get(server.url("/json", host: "localhost")))
            }
            #expect(handler.challenges.count == 2)
            #expect(handler.challenges.last?.host == "localhost")
        }
    }

    @Test("the Authenticator asks before trusting when prompting is enabled, showing the server's certificate")
    func serverTrustPrompted() async throws {
        let certificate = try await TestCertificate.make()
        defer { certificate.remove() }
        try await FaultServer.with(tls: certificate) { server async throws in
            let manager = AuthenticationManager(settings: SignInSettings(browser: nil))
            let prompt = Fakes.Prompt(trusts: true)
            manager.handleChallenges(
                using: Authenticator(prompt: prompt, signInSettings: nil, promptForUntrustedHosts: true))
            #expect(try await manager.data(for: .get(server.url("/json"))).statusCode == 200)
            #expect(prompt.questions == ["trust 127.0.0.1:\(server.port)"])
        }
    }

    @Test("a server requiring a client certificate raises the challenge; the .p12 given is stored and accepted")
    func clientCertificate() async throws {
        let serverCertificate = try await TestCertificate.make()
        let identity = try await TestCertificate.make(name: "portal-auth test client")
        defer {
            serverCertificate.remove()
            identity.remove()
        }
        let p12 = identity.directory.appendingPathComponent("client.p12")
        try identity.pkcs12(password: "p12-pass").write(to: p12)
        try await FaultServer.with(tls: serverCertificate, clientCA: identity.certificate) { server async throws in
            let client = CurlHTTPClient(configuration: .init(tls: .init(caBundle: serverCertificate.certificate)))
            #expect(try await ServerCertificateProbe().asksForClientCertificate(server.url("/json")))
            let manager = AuthenticationManager(settings: SignInSettings(browser: nil, httpClient: client))
            let declining = Fakes.NetworkHandler { _, _ in .continueWithoutCredential }
            manager.networkAuthenticationChallengeHandler = declining
            let error = try await #require(throws: AuthenticationChallengeError.self) {
                try await manager.data(for: .get(server.url("/json")))
            }
            #expect(error.kind == .clientCertificate)
            #expect(declining.challenges.map(\.kind) == [.clientCertificate])

            let prompt = Fakes.Prompt(certificates: [ClientCertificateAnswer(file: p12, password: "p12-pass")])
            manager.handleChallenges(using: Authenticator(prompt: prompt, signInSettings: nil))
            let response = try await manager.data(for: .get(server.url("/json")))
            #expect(response.statusCode == 200)
            #expect(prompt.questions == ["certificate 127.0.0.1:\(server.port)"])
            #expect(
                await manager.networkCredentialStore.credentials(
                    for: try #require(ProtectionSpace(url: server.url("/")))
                ).map(\.kind) == [.certificate])
        }
    }

    @Test("a server that does not ask for a client certificate is not probed into a challenge")
    func noClientCertificateAsked() async throws {
        let certificate = try await TestCertificate.make()
        defer { certificate.remove() }
        try await FaultServer.with(tls: certificate) { server async throws in
            #expect(try await ServerCertificateProbe().asksForClientCertificate(server.url("/json")) == false)
        }
    }

    @Test("Basic and Digest servers accept the password the handler gives", arguments: ["basic", "digest"])
    func password(scheme: String) async throws {
        try await FaultServer.with { server async throws in
            let manager = AuthenticationManager(settings: SignInSettings(browser: nil))
            let prompt = Fakes.Prompt(logins: [LoginAnswer(username: "alice", password: "s3cret")])
            manager.handleChallenges(using: Authenticator(prompt: prompt, signInSettings: nil))
            let url = server.url("/\(scheme)?user=alice&password=s3cret")
            let response = try await manager.data(for: .get(url))
            #expect(response.statusCode == 200)
            #expect(prompt.questions == ["login http(\(scheme == "basic" ? "Basic" : "Digest"))"])
            let echoed = try JSONValue.parse(response.body)
            #expect(echoed["path"]?.stringValue == "/\(scheme)")
            // Stored for 127.0.0.1:port: the next request goes through without a challenge.
            #expect(try await manager.data(for: .get(url)).statusCode == 200)
            #expect(prompt.questions.count == 1)
        }
    }
}
