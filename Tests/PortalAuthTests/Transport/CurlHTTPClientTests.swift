import Foundation
import Glibc
import Testing
@testable import PortalAuth
@testable import PortalAuthCore
@testable import PortalAuthTransport

/// The fault server's echo of a request.
struct Echo {
    let method: String
    let path: String
    let query: String
    let headers: [(String, String)]
    let body: String

    init(_ response: TransportResponse) throws {
        let json = try JSONValue.parse(response.body)
        method = json["method"]?.stringValue ?? ""
        path = json["path"]?.stringValue ?? ""
        query = json["query"]?.stringValue ?? ""
        headers = (json["headers"]?.arrayValue ?? []).compactMap { pair in
            guard let items = pair.arrayValue, items.count == 2,
                let name = items[0].stringValue, let value = items[1].stringValue
            else { return nil }
            return (name, value)
        }
        body = json["body"]?.stringValue ?? ""
    }

    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }
}

/// Sends `request` and returns the `TransportError` it throws, recording an issue when it does not.
func transportError(_ client: CurlHTTPClient, _ request: TransportRequest) async -> TransportError? {
    do {
        let response = try await client.send(request)
        Issue.record("expected a TransportError, got \(response)")
        return nil
    } catch let error as TransportError {
        return error
    } catch {
        Issue.record("expected a TransportError, got \(error)")
        return nil
    }
}

@Suite("libcurl HTTP client against the fault server", .timeLimit(.minutes(1)), .tags(.python), ExternalTools.condition)
struct CurlHTTPClientTests {
    let client = CurlHTTPClient()

    // MARK: - Round trips

    @Test("GET sends Accept, the user agent and the query; response headers are case-insensitive")
    func getRoundTrip() async throws {
        try await FaultServer.with { server async throws in
            let url = server.url("/echo?f=json&x=a%20b")
            let response = try await client.send(.get(url))
            #expect(response.statusCode == 200)
            #expect(response.url == url)
            #expect(response.headers["content-TYPE"] == "application/json")
            #expect(response.mediaType == "application/json")
            let echo = try Echo(response)
            #expect(echo.method == "GET")
            #expect(echo.path == "/echo")
            #expect(echo.query == "f=json&x=a%20b")
            #expect(echo.header("Accept") == "application/json")
            #expect(echo.header("User-Agent") == "portal-auth/\(TransportConfiguration.version)")
            #expect(echo.body == "")
        }
    }

    @Test("POST sends the form body byte for byte, headers in order, no Expect: 100-continue")
    func postRoundTrip() async throws {
        try await FaultServer.with { server async throws in
            let long = String(repeating: "v", count: 2000)  // > 1 KiB, where libcurl would add Expect
            var request = TransportRequest.form(server.url("/echo"), fields: [("code", "a b&c"), ("long", long)])
            request.headers.add(name: "X-First", value: "1")
            request.headers.add(name: "X-Second", value: "2")
            let echo = try Echo(try await client.send(request))
            #expect(echo.method == "POST")
            #expect(echo.body == "code=a+b%26c&long=\(long)")
            #expect(echo.header("Content-Type") == "application/x-www-form-urlencoded")
            #expect(echo.header("Expect") == nil)
            let names = echo.headers.map(\.0)
            let first = try #require(names.firstIndex(of: "X-First"))
            let second = try #require(names.firstIndex(of: "X-Second"))
            #expect(first < second)
        }
    }

    @Test("other methods, a custom user agent, and an empty POST")
    func otherMethods() async throws {
        try await FaultServer.with { server async throws in
            var put = TransportRequest(
                method: .put, url: server.url("/echo"), headers: [("User-Agent", "custom/1")], body: Data("{}".utf8))
            var echo = try Echo(try await client.send(put))
            #expect(echo.method == "PUT")
            #expect(echo.body == "{}")
            #expect(echo.header("User-Agent") == "custom/1")
            put.method = .delete
            put.body = nil
            echo = try Echo(try await client.send(put))
            #expect(echo.method == "DELETE")
            echo = try Echo(try await client.send(TransportRequest(method: .post, url: server.url("/echo"))))
            #expect(echo.method == "POST")
            #expect(echo.header("Content-Length") == "0")
        }
    }

    @Test("an HTTP error status is a response, not an error", arguments: [400, 401, 404, 500, 503])
    func statusSurfaced(status: Int) async throws {
        try await FaultServer.with { server async throws in
            let response = try await client.send(.get(server.url("/status/\(status)")))
            #expect(response.statusCode == status)
            #expect(try JSONValue.parse(response.body)["status"] == .integer(Int64(status)))
        }
    }

    @Test(
        "HTTP Basic and Digest authentication with a password credential",
        arguments: [
            ("/basic", .basic), ("/digest", .digest), ("/digest", [.basic, .digest]),
        ] as [(String, TransportCredentials.Password.Schemes)])
    func passwordAuthentication(path: String, schemes: TransportCredentials.Password.Schemes) async throws {
        try await FaultServer.with { server async throws in
            let url = server.url("\(path)?user=alice&password=s3cret")
            #expect(try await client.send(.get(url)).statusCode == 401)
            var request = TransportRequest.get(url)
            request.credentials.password = .init(username: "alice", password: "wrong", schemes: schemes)
            #expect(try await client.send(request).statusCode == 401)
            request.credentials.password = .init(username: "alice", password: "s3cret", schemes: schemes)
            #expect(try await client.send(request).statusCode == 200)
            #expect(!request.credentials.description.contains("s3cret"))
        }
    }

    // MARK: - Faults

    @Test("connection refused is 'unavailable' and names the URL without its query")
    func connectionRefused() async throws {
        let port = try closedPort()
        let url = URL(string: "http://127.0.0.1:\(port)/sharing/rest/oauth2/token?refresh_token=SECRET")!
        let error = try #require(await transportError(client, .form(url, fields: [("password", "HUNTER2")])))
        #expect(error.kind == .cannotConnect)
        #expect(error.category == .unavailable)
        #expect(error.curlCode == 7)
        #expect(error.description.contains("http://127.0.0.1:\(port)/sharing/rest/oauth2/token"))
        #expect(!error.description.contains("SECRET"))
        #expect(!error.description.contains("HUNTER2"))
    }

    @Test("a stalled server hits a short total timeout")
    func totalTimeout() async throws {
        try await FaultServer.with { server async throws in
            let client = CurlHTTPClient(configuration: .init(timeouts: .init(connect: .seconds(1), total: .seconds(1))))
            let error = try #require(await transportError(client, .get(server.url("/stall"))))
            #expect(error.kind == .timedOut)
            #expect(error.category == .timedOut)
        }
    }

    @Test("a server that trickles its body also hits the total timeout")
    func slowBody() async throws {
        try await FaultServer.with { server async throws in
            let client = CurlHTTPClient(configuration: .init(timeouts: .init(total: .seconds(1))))
            let error = try #require(await transportError(client, .get(server.url("/slow?seconds=10"))))
            #expect(error.kind == .timedOut)
        }
    }

    @Test("cancelling a stalled request returns promptly with CancellationError")
    func cancellation() async throws {
        try await FaultServer.with { server async throws in
            let url = server.url("/stall")
            let task = Task { try await client.send(.get(url)) }
            try await Task.sleep(for: .milliseconds(300))
            task.cancel()
            // The server never answers: only cancellation can end this (the suite's time limit guards a hang).
            let result = await task.result
            #expect(throws: CancellationError.self) { try result.get() }
        }
    }

    @Test("64 requests in flight at once run on the one event loop thread, none on a thread of its own")
    func oneLoopThread() async throws {
        try await FaultServer.with { server async throws in
            let url = server.url("/slow?seconds=0.6")
            let finished = OnceFlag()
            let statuses = Task {
                defer { finished.set() }
                return try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<64 { group.addTask { try await client.send(.get(url)).statusCode } }
                    return try await group.reduce(into: [Int]()) { $0.append($1) }
                }
            }
            // While they are in flight, the threads that run transfers: the loop's ("PortalAuth.curl"), and any
            // other a transfer would have started (one per request before issue 27: "portal-auth-curl").
            var most = 0
            var samples = 0
            while !finished.isSet {
                most = max(most, Self.transferThreads())
                samples += 1
                try await Task.sleep(for: .milliseconds(10))
            }
            let answered = try await statuses.value
            #expect(answered.count == 64 && answered.allSatisfy { $0 == 200 })
            #expect(samples > 1, "the threads were looked at while the requests were in flight")
            #expect(most <= 1, "transfers ran on \(most) threads")
            #expect(Self.transferThreads() == 1, "the loop thread stays for the next requests")
        }
    }

    @Test("requests one after another, from clients made anew, reuse one connection (the loop's pool)")
    func connectionReuse() async throws {
        try await FaultServer.with { server async throws in
            var ports: Set<Int64> = []
            for _ in 0..<5 {
                let response = try await CurlHTTPClient().send(.get(server.url("/peer")))
                ports.insert(try #require(try JSONValue.parse(response.body)["port"]?.integerValue))
            }
            #expect(ports.count == 1, "one connection for five requests, not \(ports.count)")
        }
    }

    @Test("response fields: those of an interim 100 are dropped, a folded field is joined, an empty one kept")
    func responseFields() async throws {
        try await FaultServer.with { server async throws in
            let response = try await client.send(.get(server.url("/interim")))
            #expect(response.statusCode == 200)
            #expect(response.headers["X-Interim"] == nil)
            #expect(response.headers["X-Folded"] == "a b")
            #expect(response.headers.contains("X-Empty") && response.headers["X-Empty"] == "")
            #expect(response.mediaType == "application/json")
            #expect(response.body == Data("{}".utf8))
        }
    }

    @Test("a handle used again carries nothing of its request before: no password, header, body or method")
    func reusedHandleStartsClean() async throws {
        try await FaultServer.with { server async throws in
            var first = TransportRequest(
                method: .post, url: server.url("/basic?user=alice&password=s3cret"), headers: [("X-Secret", "1")],
                body: Data("a=b".utf8))
            first.credentials.password = .init(username: "alice", password: "s3cret", schemes: .basic)
            let second = TransportRequest.get(server.url("/echo"))
            // A handle of the test's own (the loop keeps only those it hands out), so no other test can take it.
            let loop = try CurlMultiLoop.shared(for: first.url)
            let easy = try CurlEasyHandle(url: first.url)
            let deadline = ContinuousClock.now + .seconds(30)
            func transfer(_ request: TransportRequest) throws -> CurlTransfer {
                try CurlTransfer(
                    request: request, target: try RequestTarget.checked(request.url),
                    configuration: TransportConfiguration(),
                    deadline: deadline, easy: easy)
            }
            let answered = try await loop.run(try transfer(first))
            #expect(answered.statusCode == 200, "the password opened /basic")
            #expect(try Echo(answered).header("X-Secret") == "1")
            try easy.reset()
            easy.assign(url: second.url)
            let echo = try Echo(try await loop.run(try transfer(second)))
            #expect(echo.method == "GET")
            #expect(echo.path == "/echo")
            #expect(echo.header("Authorization") == nil)
            #expect(echo.header("X-Secret") == nil)
            #expect(echo.header("Content-Type") == nil)
            #expect(echo.body == "")
        }
    }

    @Test("the loop keeps the handles it hands out for the next requests, and no other")
    func handlesKeptForNextRequests() throws {
        let url = URL(string: "http://127.0.0.1:9/")!
        let loop = try CurlMultiLoop.shared(for: url)
        #expect(try loop.handle(for: url).returnsToLoop)
        #expect(try CurlEasyHandle(url: url).returnsToLoop == false)
    }

    /// Threads of this process that run libcurl transfers, by name.
    static func transferThreads() -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter { task in
            let name = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
            return name.hasPrefix("PortalAuth.curl") || name.hasPrefix("portal-auth-cur")
        }.count
    }

    @Test("a task cancelled before sending connects to nothing")
    func cancelledBeforehand() async throws {
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await client.send(.get(URL(string: "https://example.invalid/")!))
        }
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    @Test("plain http to a non-loopback host is refused before any connection")
    func insecureHTTPRefused() async throws {
        let url = URL(string: "http://example.invalid/sharing/rest/oauth2/token?client_secret=SECRET")!
        let error = try #require(await transportError(client, .form(url, fields: [("a", "b")])))
        #expect(error.kind == .insecureHTTP)  // not cannotResolveHost: no lookup, no connection
        #expect(error.category == .usage)
        #expect(error.curlCode == nil)
        #expect(error.description.contains("http://example.invalid/sharing/rest/oauth2/token"))
        #expect(error.description.contains("https://"))
        #expect(!error.description.contains("SECRET"))
    }

    @Test("a response larger than the limit is refused", arguments: [false, true])
    func responseTooLarge(chunked: Bool) async throws {
        try await FaultServer.with { server async throws in
            let client = CurlHTTPClient(configuration: .init(maxResponseBytes: 100_000))
            let url = server.url("/big?bytes=300000&chunked=\(chunked ? 1 : 0)")
            let error = try #require(await transportError(client, .get(url)))
            #expect(error.kind == .responseTooLarge)
            #expect(error.category == .invalidContent)
            #expect(error.description.contains("100000"))
            // Just under the limit passes.
            let fits = try await client.send(.get(server.url("/big?bytes=90000&chunked=\(chunked ? 1 : 0)")))
            #expect(fits.body.count == 90000)
        }
    }

    @Test("a response header of 200 KiB names the server and the cause, as a bad answer (issue 25, item 10)")
    func responseHeadersTooLarge() async throws {
        try await FaultServer.with { server async throws in
            let url = server.url("/big-header?bytes=204800&token=SECRET")
            let error = try #require(await transportError(client, .get(url)))
            #expect(error.kind == .responseHeadersTooLarge)
            #expect(error.category == .invalidContent)
            #expect(error.description.contains(server.url("/big-header").absoluteString), "names the server")
            #expect(error.description.contains("response headers larger than libcurl's limit of 102400 bytes"))
            #expect(
                !error.description.contains("Out of memory") && !error.description.contains("internal problem"),
                "\(error)")
            #expect(!error.description.contains("SECRET"))
            // A large header under the limit is received.
            let fits = try await client.send(.get(server.url("/big-header?bytes=60000")))
            #expect(fits.headers["X-Padding"]?.count == 60000)
        }
    }

    @Test(
        "a reply that is not HTTP, and a reset connection",
        arguments: [
            ("/garbage", TransportError.Kind.invalidResponse), ("/reset", .connectionFailed),
        ])
    func brokenServers(path: String, kind: TransportError.Kind) async throws {
        try await FaultServer.with { server async throws in
            let error = try #require(await transportError(client, .get(server.url(path))))
            #expect(error.kind == kind, "\(error)")
            #expect(error.category == .unavailable)
            #expect(!error.detail.isEmpty)
        }
    }

    @Test("a header value with a line break is refused")
    func headerInjection() async throws {
        var request = TransportRequest.get(URL(string: "https://example.invalid/")!)
        request.headers.add(name: "X-Test", value: "a\r\nInjected: yes")
        let error = try #require(await transportError(client, request))
        #expect(error.kind == .invalidHeader)
        #expect(!error.description.contains("Injected"))
    }

    // MARK: - Redirects

    @Test("redirects are returned, not followed, by default")
    func redirectNotFollowed() async throws {
        try await FaultServer.with { server async throws in
            let response = try await client.send(.get(server.url("/redirect?to=/json&status=302")))
            #expect(response.statusCode == 302)
            #expect(response.headers["location"] == "/json")
        }
    }

    @Test("followed redirects end at the target, and each hop is checked")
    func redirectFollowed() async throws {
        try await FaultServer.with { server async throws in
            let client = CurlHTTPClient(configuration: .init(followRedirects: true, maxRedirects: 2))
            let response = try await client.send(
                .form(server.url("/redirect?to=/echo&status=303"), fields: [("a", "b")]))
            #expect(response.url == server.url("/echo"))
            #expect(try Echo(response).method == "GET")
            let kept = try await client.send(.form(server.url("/redirect?to=/echo&status=307"), fields: [("a", "b")]))
            #expect(try Echo(kept).method == "POST")
            #expect(try Echo(kept).body == "a=b")

            let insecure = try #require(
                await transportError(client, .get(server.url("/redirect?to=http://example.invalid/x"))))
            #expect(insecure.kind == .insecureHTTP)

            let loop =
                "/redirect?to=" + FormEncoding.escape("/redirect?to=" + FormEncoding.escape("/redirect?to=/json"))
            let tooMany = try #require(await transportError(client, .get(server.url(loop))))
            #expect(tooMany.kind == .tooManyRedirects)
        }
    }

    @Test("a redirect to another host drops credentials and authorization")
    func redirectDropsCredentials() throws {
        var request = TransportRequest.get(URL(string: "https://a.example.com/x")!)
        request.headers.add(name: "Authorization", value: "Bearer T")
        request.credentials.password = .init(username: "u", password: "p")
        let sameHost = TransportResponse(statusCode: 302, headers: [("Location", "/y")], url: request.url)
        let kept = try #require(try CurlHTTPClient.redirect(after: sameHost, of: request))
        #expect(kept.url.absoluteString == "https://a.example.com/y")
        #expect(kept.headers["Authorization"] == "Bearer T")
        #expect(kept.credentials.password != nil)

        let otherHost = TransportResponse(
            statusCode: 307, headers: [("Location", "https://b.example.com/z")], url: request.url)
        let dropped = try #require(try CurlHTTPClient.redirect(after: otherHost, of: request))
        #expect(dropped.headers["Authorization"] == nil)
        #expect(dropped.credentials.isEmpty)

        let downgrade = TransportResponse(
            statusCode: 301, headers: [("Location", "http://127.0.0.1/")], url: request.url)
        #expect(throws: TransportError.self) { try CurlHTTPClient.redirect(after: downgrade, of: request) }
        #expect(
            try CurlHTTPClient.redirect(after: TransportResponse(statusCode: 200, url: request.url), of: request) == nil
        )
    }
}

/// A loopback port that refuses connections: bound, never listening.
func closedPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw FaultServerError(message: "socket failed") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
        }
    }
    guard bound else { close(fd); throw FaultServerError(message: "bind failed") }
    // Kept bound (and leaked for the test process's life) so no one else takes the port.
    return Int(UInt16(bigEndian: address.sin_port))
}

/// A flag one task sets and another reads.
final class OnceFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false

    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
