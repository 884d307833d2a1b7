import Foundation
import Testing
@testable import PortalAuthTransport

@Suite(
    "The CA store: read once per process and shared by the connections that trust it", .timeLimit(.minutes(1)),
    .tags(.python, .openssl), ExternalTools.condition)
struct CAStoreTests {
    @Test("concurrent first requests over several connections load the CA bundle once and share its store")
    func burstLoadsOnce() async throws {
        let certificate = try await TestCertificate.make()
        defer { certificate.remove() }
        try await FaultServer.with(tls: certificate) { server async throws in
            let cache = CAStoreCache()
            let client = CurlHTTPClient(
                configuration: .init(tls: .init(caBundle: certificate.certificate)), caStores: cache)
            // Each response takes a moment (HTTP/1.1, one request per connection at a time), so the burst opens
            // several TLS connections at once, none of which finds a store already built before the first asks.
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<8 {
                    group.addTask { try await client.send(.get(server.url("/slow?seconds=0.4"))).statusCode }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses == Array(repeating: 200, count: 8))
            #expect(cache.loads == 1)
            let store = try cache.store(for: CASource(file: certificate.certificate.path))
            #expect(cache.loads == 1)
            #expect(store.connections >= 2, "the burst's connections were not all given the shared store")
        }
    }

    @Test("the connection is verified against the shared store, not a bundle libcurl reads itself")
    func verifiedAgainstSharedStore() async throws {
        try await FaultServer.withStranger { server, certificate, stranger in
            // The configuration names the server's own certificate, but the store is built from a stranger's.
            let strangerSource = CASource(file: stranger.certificate.path)
            let cache = CAStoreCache(loader: { _ throws(CAStore.LoadError) in try CAStore.load(strangerSource) })
            let client = CurlHTTPClient(
                configuration: .init(tls: .init(caBundle: certificate.certificate)), caStores: cache)
            let error = try #require(await transportError(client, .get(server.url("/json"))))
            #expect(error.kind == .tlsVerificationFailed, "\(error)")
            #expect(cache.loads == 1)
        }
    }

    @Test("a transfer with another CA file gets its own store, and no connection or TLS session verified by the first")
    func otherFileOwnStore() async throws {
        try await FaultServer.withStranger { server, certificate, stranger in
            let cache = CAStoreCache()
            let trusting = CurlHTTPClient(
                configuration: .init(tls: .init(caBundle: certificate.certificate)), caStores: cache)
            let other = CurlHTTPClient(
                configuration: .init(tls: .init(caBundle: stranger.certificate)), caStores: cache)
            #expect(try await trusting.send(.get(server.url("/json"))).statusCode == 200)
            // The same server, just verified and kept open (HTTP/1.1 keep-alive, a resumable TLS session): a transfer
            // trusting only the stranger must verify for itself, and fail.
            let error = try #require(await transportError(other, .get(server.url("/json"))))
            #expect(error.kind == .tlsVerificationFailed, "\(error)")
            #expect(try await trusting.send(.get(server.url("/json"))).statusCode == 200)
            #expect(cache.loads == 2)
        }
    }

    @Test(
        "a bundle of certificates is indexed: a verification parses the certificates of its issuer's name, all of them")
    func bundleIndexedByName() async throws {
        var others: [TestCertificate] = []
        for number in 0..<3 { others.append(try await TestCertificate.make(name: "PortalAuth test CA \(number)")) }
        defer { others.forEach { $0.remove() } }
        try await FaultServer.withStranger { server, certificate, stranger in
            // Certificates of other names, then the stranger, which has the server's name (CN=127.0.0.1) and another
            // key, before the server's own: a look-up that took the first certificate of a name would fail.
            let bundle = certificate.directory.appendingPathComponent("bundle.pem")
            try (others + [stranger, certificate]).map { try Data(contentsOf: $0.certificate) }.reduce(Data(), +)
                .write(to: bundle)
            let cache = CAStoreCache()
            let client = CurlHTTPClient(configuration: .init(tls: .init(caBundle: bundle)), caStores: cache)
            let index = try #require(try cache.store(for: CASource(file: bundle.path)).index)
            #expect(index.count == 5)
            #expect(index.parsed == 0)
            #expect(try await client.send(.get(server.url("/json"))).statusCode == 200)
            #expect(index.parsed == 2, "the two certificates named CN=127.0.0.1 and no other")
            #expect(try await client.send(.get(server.url("/json"))).statusCode == 200)
            #expect(index.parsed == 2)
            #expect(cache.loads == 1)
        }
    }

    @Test("a bundle holding more than plain certificates is loaded whole; a damaged one is reported")
    func otherBundlesLoadedWhole() async throws {
        try await FaultServer.withStranger { server, certificate, stranger in
            // The server's certificate with trust settings (a TRUSTED CERTIFICATE block), which the index leaves to
            // OpenSSL's own reading.
            let trusted = certificate.directory.appendingPathComponent("trusted.pem")
            try runTool(
                "openssl",
                [
                    "x509", "-in", certificate.certificate.path, "-trustout", "-addtrust", "serverAuth", "-out",
                    trusted.path,
                ])
            let bundle = certificate.directory.appendingPathComponent("bundle.pem")
            try (Data(contentsOf: stranger.certificate) + Data(contentsOf: trusted)).write(to: bundle)
            let cache = CAStoreCache()
            let client = CurlHTTPClient(configuration: .init(tls: .init(caBundle: bundle)), caStores: cache)
            #expect(try cache.store(for: CASource(file: bundle.path)).index == nil)
            #expect(try await client.send(.get(server.url("/json"))).statusCode == 200)

            let damaged = certificate.directory.appendingPathComponent("damaged.pem")
            try
                (Data(contentsOf: certificate.certificate)
                + Data("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n".utf8))
                .write(to: damaged)
            #expect(throws: CAStore.LoadError.self) { try cache.store(for: CASource(file: damaged.path)) }
        }
    }

    @Test("a plain-HTTP request reads no CA bundle: it succeeds where the bundle is missing, and HTTPS reports it")
    func plainHTTPReadsNoBundle() async throws {
        let missing = URL(fileURLWithPath: "/nonexistent/portal-auth-\(UUID())/ca-certificates.crt")
        let cache = CAStoreCache()
        let client = CurlHTTPClient(configuration: .init(tls: .init(caBundle: missing)), caStores: cache)
        try await FaultServer.with { server async throws in
            #expect(try await client.send(.get(server.url("/json"))).statusCode == 200)
            #expect(cache.loads == 0)
        }
        let certificate = try await TestCertificate.make()
        defer { certificate.remove() }
        try await FaultServer.with(tls: certificate) { server async throws in
            let error = await #expect(throws: TransportError.self) {
                try await client.send(.get(server.url("/json")))
            }
            #expect(error?.kind == .caBundleUnusable)
            #expect(error?.description.contains(missing.path) == true)
        }
    }

    @Test("a CA bundle changed on disk is read again; an unreadable one is reported and not kept")
    func changedAndMissingFiles() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("portal-auth-ca-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = try await TestCertificate.make()
        let second = try await TestCertificate.make()
        defer {
            first.remove()
            second.remove()
        }
        let bundle = folder.appendingPathComponent("bundle.pem")
        let source = CASource(file: bundle.path)
        let cache = CAStoreCache()
        #expect(throws: CAStore.LoadError.self) { try cache.store(for: source) }
        try Data(contentsOf: first.certificate).write(to: bundle)
        let store = try cache.store(for: source)
        #expect(try cache.store(for: source) === store)
        // Replaced as package managers do (a new file renamed over the old one): another inode, another size.
        try (Data(contentsOf: first.certificate) + Data(contentsOf: second.certificate)).write(
            to: bundle, options: .atomic)
        #expect(try cache.store(for: source) !== store)
        #expect(cache.loads == 3)
    }
}
