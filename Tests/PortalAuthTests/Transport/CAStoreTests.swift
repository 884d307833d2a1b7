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
