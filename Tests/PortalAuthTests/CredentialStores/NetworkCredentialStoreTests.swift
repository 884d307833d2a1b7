import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthCore
@testable import PortalAuthTransport

/// Network credentials from a `NetworkCredentialStore` applied by `CurlHTTPClient` to real loopback servers
/// (`Tests/Fakes/fault_server.py`): self-signed TLS, client certificates, Basic and Digest.
@Suite(
    "Network credentials against TLS, client-certificate, Basic and Digest servers", .timeLimit(.minutes(1)),
    .tags(.python, .openssl), ExternalTools.condition)
struct NetworkCredentialStoreTests {
    /// Sends `request` with what `store` holds for its URL.
    func send(_ url: URL, _ store: NetworkCredentialStore, client: CurlHTTPClient = CurlHTTPClient()) async throws
        -> TransportResponse
    {
        var request = TransportRequest.get(url)
        request.credentials = await store.transportCredentials(for: url)
        return try await client.send(request)
    }

    // MARK: - Server trust

    @Test("a self-signed server is refused by default and accepted with server trust, for its own host and port only")
    func serverTrustForItsHostOnly() async throws {
        let first = try await TestCertificate.make()
        let second = try await TestCertificate.make()  // also for 127.0.0.1 and localhost, another key
        defer {
            first.remove()
            second.remove()
        }
        try await FaultServer.with(tls: first) { trusted async throws in
            try await FaultServer.with(tls: second) { other async throws in
                let store = NetworkCredentialStore()
                let url = trusted.url("/json")
                let refused = try #require(await transportError(CurlHTTPClient(), .get(url)))
                #expect(refused.kind == .tlsVerificationFailed)

                // What the challenge shows: the certificate the server presents, read without trusting it.
                let seen = try await ServerCertificateProbe().certificate(of: url)
                #expect(seen.isSelfSigned)
                #expect(seen.matches(host: "127.0.0.1") && seen.matches(host: "localhost"))
                #expect(
                    seen.der == (try CertificateInfo(pem: String(contentsOf: first.certificate, encoding: .utf8)).der))

                let space = try #require(ProtectionSpace(url: url))
                try await store.trust(seen, for: space)
                #expect(try await send(url, store).statusCode == 200)
                #expect(await store.credentials(for: space).map(\.kind) == [.serverTrust])

                // The other server — another port, and another host name — is still refused.
                for otherURL in [other.url("/json"), other.url("/json", host: "localhost")] {
                    #expect(await store.transportCredentials(for: otherURL).isEmpty)
                    var request = TransportRequest.get(otherURL)
                    request.credentials = await store.transportCredentials(for: otherURL)
                    #expect(await transportError(CurlHTTPClient(), request)?.kind == .tlsVerificationFailed)
                }
                // Even given the trusted certificate outright, the other server's certificate does not verify:
                // the trust is in one certificate, not "verification off".
                var forced = TransportRequest.get(other.url("/json"))
                forced.credentials = await store.transportCredentials(for: url)
                #expect(await transportError(CurlHTTPClient(), forced)?.kind == .tlsVerificationFailed)
                // The same host on its other name is another protection space: not trusted until asked.
                #expect(await store.transportCredentials(for: trusted.url("/json", host: "localhost")).isEmpty)

                await store.remove(.serverTrust, for: space)
                #expect(await store.protectionSpaces.isEmpty)
                #expect(await transportError(CurlHTTPClient(), .get(url))?.kind == .tlsVerificationFailed)
            }
        }
    }

    @Test("a server trust is only kept bound to a certificate that names the space's host")
    func serverTrustNeedsTheRightCertificate() async throws {
        let foreign = try await TestCertificate.make(name: "other.example", altNames: "DNS:other.example")
        defer { foreign.remove() }
        let store = NetworkCredentialStore()
        let space = ProtectionSpace(host: "127.0.0.1", port: 8443)
        let unbound = try await #require(throws: NetworkCredentialError.self) {
            try await store.add(.serverTrust, for: space)
        }
        #expect(unbound.kind == .serverTrustUnusable)

        let info = try CertificateInfo(pem: String(contentsOf: foreign.certificate, encoding: .utf8))
        let mismatch = try await #require(throws: NetworkCredentialError.self) {
            try await store.trust(info, for: space)
        }
        #expect(mismatch.kind == .serverTrustUnusable)
        #expect(mismatch.description.contains("/CN=other.example"))
        #expect(mismatch.description.contains("127.0.0.1"))
        #expect(await store.protectionSpaces.isEmpty)
        try await store.trust(info, for: ProtectionSpace(host: "Other.Example.", port: 8443))
        #expect(await store.protectionSpaces == [ProtectionSpace(host: "other.example", port: 8443)])
    }

    @Test("the probe reads only https servers and reports a server that is not there")
    func probeErrors() async throws {
        let plain = try await #require(throws: TransportError.self) {
            try await ServerCertificateProbe().certificate(of: URL(string: "http://127.0.0.1:9/")!)
        }
        #expect(plain.kind == .unsupportedURL)
        let closed = try await #require(throws: TransportError.self) {
            try await ServerCertificateProbe().certificate(of: URL(string: "https://127.0.0.1:9/")!)
        }
        #expect(closed.kind == .cannotConnect)
    }

    // MARK: - Client certificate

    /// How a refused client certificate can surface, depending on when the server's alert is read.
    static let clientCertificateRefusals: [TransportError.Kind] = [
        .clientCertificateRequired, .connectionFailed, .tlsHandshakeFailed,
    ]

    @Test("the TLS 1.3 alert certificate_required is reported as a client-certificate request", arguments: [35, 56])
    func certificateRequiredAlert(code: Int) {
        let error = TransportError.curl(
            code: code,
            message:
                "OpenSSL SSL_read: OpenSSL/3.0.22: error:0A00045C:SSL routines::tlsv13 alert certificate required, errno 0",
            url: RedactedURL(URL(string: "https://gis.example.com/portal")!), caBundle: nil)
        #expect(error.kind == .clientCertificateRequired)
        #expect(error.category == .refused)
        #expect(
            error.description.hasPrefix(
                "The server at https://gis.example.com/portal requires a TLS client certificate"))
        let other = TransportError.curl(
            code: code, message: "OpenSSL SSL_read: unexpected eof while reading",
            url: RedactedURL(URL(string: "https://h")!), caBundle: nil)
        #expect(other.kind != .clientCertificateRequired)
    }

    @Test("a server requiring a client certificate accepts the .p12 from the store, and nothing without it")
    func clientCertificate() async throws {
        let server = try await TestCertificate.make()
        defer { server.remove() }
        try await CertificateCredentialTests.withIdentity { identity, p12 in
            try await FaultServer.with(tls: server, clientCA: identity.certificate) { running async throws in
                let url = running.url("/json")
                let space = try #require(ProtectionSpace(url: url))
                let store = NetworkCredentialStore()
                try await store.trust(ServerCertificateProbe().certificate(of: url), for: space)
                let refused = try await #require(throws: TransportError.self) { try await send(url, store) }
                // The TLS 1.3 alert certificate_required arrives unless the test server's close races it.
                #expect(Self.clientCertificateRefusals.contains(refused.kind), "\(refused)")

                try await store.add(.certificate(at: p12, password: CertificateCredentialTests.password), for: space)
                #expect(try await send(url, store).statusCode == 200)
                #expect(Set(await store.credentials(for: space).map(\.kind)) == [.certificate, .serverTrust])

                let someoneElse = try await TestCertificate.make(name: "mallory")
                defer { someoneElse.remove() }
                let otherFile = someoneElse.directory.appendingPathComponent("mallory.p12")
                try await BlockingWork.run { try someoneElse.pkcs12(password: "x-pass") }.write(to: otherFile)
                try await store.add(.certificate(at: otherFile, password: "x-pass"), for: space)  // replaces alice's
                let stranger = try await #require(throws: TransportError.self) { try await send(url, store) }
                #expect(Self.clientCertificateRefusals.contains(stranger.kind), "\(stranger)")
            }
        }
    }

    // MARK: - Basic and Digest

    @Test(
        "Basic and Digest servers accept the password credential; a wrong password gets 401",
        arguments: ["basic", "digest"])
    func password(scheme: String) async throws {
        try await FaultServer.with { server async throws in
            let url = server.url("/\(scheme)?user=alice&password=correct-horse")
            let space = try #require(ProtectionSpace(url: url))
            let store = NetworkCredentialStore()
            #expect(try await send(url, store).statusCode == 401)

            try await store.add(.password(username: "alice", password: "wrong"), for: space)
            #expect(try await send(url, store).statusCode == 401)

            try await store.add(.password(username: "alice", password: "correct-horse"), for: space)
            let response = try await send(url, store)
            #expect(response.statusCode == 200)
            let authorization = try #require(try Echo(response).header("Authorization"))
            #expect(authorization.hasPrefix(scheme == "basic" ? "Basic " : "Digest "))
            if scheme == "digest" {
                // The test server takes the expected password in the query, which the Digest uri repeats.
                #expect(
                    !authorization.replacingOccurrences(of: "password=correct-horse", with: "").contains(
                        "correct-horse"),
                    "Digest never sends the password")
            }
            #expect(await store.credentials(for: space).count == 1, "a new password replaces the old one")
            #expect(!"\(await store.credentials(for: space))".contains("correct-horse"))

            // Another protection space (same host, another port) gets nothing.
            #expect(
                await store.transportCredentials(for: URL(string: "http://127.0.0.1:\(server.port + 1)/\(scheme)")!)
                    .isEmpty)
            await store.removeAll()
            #expect(try await send(url, store).statusCode == 401)
        }
    }
}
