// The client side of scripts/bench's library section (issue 27): N GETs of one URL at concurrency C through
// PortalAuth's `AuthenticationManager.data(for:)`, Foundation's URLSession or AsyncHTTPClient, and the expiry burst
// (requests while the token expires, against Tests/Bench/burst_server.py). Prints one JSON object: requests that
// succeeded and failed, wall seconds, the most threads the process had while it ran (read from /proc/self/status
// every 20 ms by a task, which starts no thread of its own), and the build it is ("debug" or "release": timing a
// debug build says nothing of the library's speed, so library.py then checks only the functional goals).
//
//   library-bench portalauth|urlsession|ahc URL REQUESTS CONCURRENCY
//   library-bench burst PORTAL_URL REQUESTS CONCURRENCY
//
// The CA bundle: PORTAL_AUTH_CA_BUNDLE (PortalAuth), URLSessionCertificateAuthorityInfoFile (URLSession on Linux),
// BENCH_CA_FILE (AsyncHTTPClient).
import Foundation
import PortalAuth
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(AsyncHTTPClient)
    import AsyncHTTPClient
    import NIOSSL
#endif

/// What one run measured.
struct Outcome: Encodable {
    var client: String
    var requests: Int
    var concurrency: Int
    var ok = 0
    var failed = 0
    var seconds = 0.0
    var maxThreads = 0
    var firstError: String?
    #if DEBUG
        var build = "debug"
    #else
        var build = "release"
    #endif
}

/// The process's thread count now: the `Threads:` line of /proc/self/status, read with one `read` into a buffer
/// (Foundation's file reading costs about a millisecond of CPU on a /proc file, which the measured client would
/// pay 50 times a second).
func threadCount() -> Int {
    let descriptor = open("/proc/self/status", O_RDONLY)
    guard descriptor >= 0 else { return 0 }
    defer { close(descriptor) }
    var buffer = [UInt8](repeating: 0, count: 8192)
    let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
    guard count > 0 else { return 0 }
    let label = Array("\nThreads:".utf8)
    let bytes = buffer[..<count]
    guard
        let start = (bytes.startIndex..<(bytes.endIndex - label.count)).first(where: {
            bytes[$0..<($0 + label.count)].elementsEqual(label)
        })
    else { return 0 }
    let digits = bytes[(start + label.count)...].drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }.prefix {
        (48...57).contains($0)
    }
    return Int(String(decoding: digits, as: UTF8.self)) ?? 0
}

/// Runs `count` calls of `send` with at most `concurrency` at once; fills in `outcome`.
func drive(_ outcome: inout Outcome, _ send: @escaping @Sendable () async throws -> Int) async {
    let most = Mutex(threadCount())
    let sampler = Task {
        while !Task.isCancelled {
            let now = threadCount()
            most.withLock { $0 = max($0, now) }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }
    let start = ContinuousClock.now
    let results: [Result<Int, any Error>] = await withTaskGroup(of: Result<Int, any Error>.self) { group in
        var results: [Result<Int, any Error>] = []
        for index in 0..<outcome.requests {
            if index >= outcome.concurrency, let result = await group.next() { results.append(result) }
            group.addTask { await Result { try await send() } }
        }
        for await result in group { results.append(result) }
        return results
    }
    let elapsed = ContinuousClock.now - start
    sampler.cancel()
    _ = await sampler.value
    outcome.seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    outcome.maxThreads = max(most.withLock { $0 }, threadCount())
    for result in results {
        switch result {
        case .success(let status) where status == 200: outcome.ok += 1
        case .success(let status):
            outcome.failed += 1
            outcome.firstError = outcome.firstError ?? "HTTP \(status)"
        case .failure(let error):
            outcome.failed += 1
            outcome.firstError = outcome.firstError ?? "\(error)"
        }
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}

let arguments = CommandLine.arguments
guard arguments.count == 5, let url = URL(string: arguments[2]), let requests = Int(arguments[3]),
    let concurrency = Int(arguments[4])
else {
    FileHandle.standardError.write(
        Data("usage: library-bench portalauth|urlsession|ahc|burst URL REQUESTS CONCURRENCY\n".utf8))
    exit(64)
}
/// Runs `client`'s requests and measures them.
func measure(_ client: String, url: URL, requests: Int, concurrency: Int) async throws -> Outcome {
    var outcome = Outcome(client: client, requests: requests, concurrency: concurrency)
    switch client {
    case "portalauth":
        // As an app does: a manager holding the credential for the server, every request through data(for:).
        let manager = AuthenticationManager()
        let token = TokenInfo(
            accessToken: "bench-token", expirationDate: Date().addingTimeInterval(3600), isSSLRequired: true)!
        try await manager.arcGISCredentialStore.addAndPersist(PregeneratedTokenCredential(url: url, tokenInfo: token))
        await drive(&outcome) { try await manager.data(for: .get(url)).statusCode }

    case "urlsession":
        let configuration = URLSessionConfiguration.default
        configuration.httpMaximumConnectionsPerHost = concurrency
        let session = URLSession(configuration: configuration)
        await drive(&outcome) {
            let (_, response) = try await session.data(from: url)
            return (response as? HTTPURLResponse)?.statusCode ?? 0
        }

    #if canImport(AsyncHTTPClient)
        case "ahc":
            var configuration = HTTPClient.Configuration()
            if let file = ProcessInfo.processInfo.environment["BENCH_CA_FILE"] {
                var tls = TLSConfiguration.makeClientConfiguration()
                tls.trustRoots = .file(file)
                configuration.tlsConfiguration = tls
            }
            configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = max(8, concurrency)
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            await drive(&outcome) {
                let response = try await client.execute(
                    HTTPClientRequest(url: url.absoluteString), timeout: .seconds(60))
                _ = try await response.body.collect(upTo: 1 << 20)
                return Int(response.status.code)
            }
            try await client.shutdown()
    #endif

    case "burst":
        // The token kind that renews itself (generateToken with a username and password), at a server that refuses
        // the token it issued once it has served some requests with it (it "expires" mid-burst).
        let manager = AuthenticationManager()
        let credential = try await TokenCredential.credential(for: url, username: "bench", password: "bench-password")
        try await manager.arcGISCredentialStore.addAndPersist(credential)
        let resource = url.appendingPathComponent("sharing/rest/portals/self")
        await drive(&outcome) { try await manager.data(for: .get(resource)).statusCode }

    default:
        FileHandle.standardError.write(Data("library-bench: unknown client \(client)\n".utf8))
        exit(64)
    }
    return outcome
}

let outcome = try await measure(arguments[1], url: url, requests: requests, concurrency: concurrency)

let encoder = JSONEncoder()
encoder.keyEncodingStrategy = .convertToSnakeCase
print(String(decoding: try encoder.encode(outcome), as: UTF8.self))
