import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthCore
@testable import PortalAuthTransport

@Suite(
    "TLS through libcurl with a self-signed server", .timeLimit(.minutes(1)), .tags(.python, .openssl),
    ExternalTools.condition)
struct TLSTests {
    @Test("an unknown self-signed certificate fails verification with the CA-bundle hint")
    func selfSignedRefused() async throws {
        let certificate = try await TestCertificate.make()
        defer { certificate.remove() }
        try await FaultServer.with(tls: certificate) { server async throws in
            let error = try #require(await transportError(CurlHTTPClient(), .get(server.url("/json?token=SECRET"))))
            #expect(error.kind == .tlsVerificationFailed, "\(error)")
            #expect(error.category == .unavailable)
            #expect(error.curlCode == 60)
            #expect(error.description.contains("TransportConfiguration.TLS.caBundle"))
            #expect(error.description.contains("PORTAL_AUTH_CA_BUNDLE"))
            #expect(error.description.contains("https://127.0.0.1:\(server.port)/json"))
            #expect(!error.description.contains("SECRET"))
        }
    }

    @Test("the same server is accepted when the CA bundle holds its certificate")
    func caBundleAccepted() async throws {
        let certificate = try await TestCertificate.make()
        defer { certificate.remove() }
        try await FaultServer.with(tls: certificate) { server async throws in
            let client = CurlHTTPClient(configuration: .init(tls: .init(caBundle: certificate.certificate)))
            let response = try await client.send(.get(server.url("/json")))
            #expect(response.statusCode == 200)
            #expect(try JSONValue.parse(response.body)["ok"] == .bool(true))
        }
    }

    @Test("a certificate trusted for the request's host is accepted without a CA bundle")
    func trustedServerCertificate() async throws {
        let certificate = try await TestCertificate.make()
        defer { certificate.remove() }
        try await FaultServer.with(tls: certificate) { server async throws in
            var request = TransportRequest.get(server.url("/json"))
            request.credentials.trustedServerCertificates = try Data(contentsOf: certificate.certificate)
            #expect(try await CurlHTTPClient().send(request).statusCode == 200)
        }
    }

    @Test("a CA bundle without the server's certificate is refused")
    func strangerBundle() async throws {
        try await FaultServer.withStranger { server, _, stranger async throws in
            let client = CurlHTTPClient(configuration: .init(tls: .init(caBundle: stranger.certificate)))
            let error = try #require(await transportError(client, .get(server.url("/json"))))
            #expect(error.kind == .tlsVerificationFailed)
        }
    }

    @Test("host name verification stays on: a trusted certificate for another name is refused")
    func hostNameChecked() async throws {
        let certificate = try await TestCertificate.make(name: "other.example", altNames: "DNS:other.example")
        defer { certificate.remove() }
        try await FaultServer.with(tls: certificate) { server async throws in
            let client = CurlHTTPClient(configuration: .init(tls: .init(caBundle: certificate.certificate)))
            let error = try #require(await transportError(client, .get(server.url("/json"))))
            #expect(error.kind == .tlsVerificationFailed)
            #expect(error.detail.contains("127.0.0.1"), "\(error.detail)")
        }
    }

    @Test("a CA bundle that does not exist is reported with its path")
    func missingCABundle() async throws {
        let certificate = try await TestCertificate.make()
        defer { certificate.remove() }
        try await FaultServer.with(tls: certificate) { server async throws in
            let missing = URL(fileURLWithPath: "/nonexistent/portal-auth-ca.pem")
            let client = CurlHTTPClient(configuration: .init(tls: .init(caBundle: missing)))
            let error = try #require(await transportError(client, .get(server.url("/json"))))
            #expect(error.kind == .caBundleUnusable, "\(error)")
            #expect(error.category == .unreadableInput)
            #expect(error.description.contains(missing.path))
        }
    }

    @Test("a server requiring a client certificate accepts the PKCS#12 identity")
    func clientCertificate() async throws {
        let serverCertificate = try await TestCertificate.make()
        let clientIdentity = try await TestCertificate.make(name: "portal-auth test client")
        defer {
            serverCertificate.remove()
            clientIdentity.remove()
        }
        let pkcs12 = try clientIdentity.pkcs12(password: "p12-pass")
        try await FaultServer.with(tls: serverCertificate, clientCA: clientIdentity.certificate) {
            server async throws in
            let client = CurlHTTPClient(configuration: .init(tls: .init(caBundle: serverCertificate.certificate)))
            var request = TransportRequest.get(server.url("/json"))
            _ = try #require(await transportError(client, request))  // no certificate: refused by the server

            request.credentials.clientCertificate = .init(pkcs12: pkcs12, password: "wrong")
            let wrongPassword = try #require(await transportError(client, request))
            #expect(wrongPassword.kind == .clientCertificateUnusable, "\(wrongPassword)")
            #expect(!wrongPassword.description.contains("wrong"))

            request.credentials.clientCertificate = .init(pkcs12: pkcs12, password: "p12-pass")
            #expect(try await client.send(request).statusCode == 200)
        }
    }
}
