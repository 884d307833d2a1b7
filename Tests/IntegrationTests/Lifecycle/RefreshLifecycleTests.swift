import Foundation
import Glibc
import Testing
@testable import PortalAuth

/// Refreshing stored sign-ins against the real authorization server: forced expiry, rotation and the server's
/// answer to a reused refresh token, ArcGIS `exchange_refresh_token`, dead refresh tokens, many processes at
/// once, a process killed while holding the lock, and the identity provider failing.
///
/// Serialized, and each test signs in into its own scratch store: the server's expiry controls and
/// configuration are global, and other suites may revoke alice's tokens.
@Suite("Token refresh end to end", .serialized, .enabled(if: TestServer.isConfigured))
struct RefreshLifecycleTests {
    let control: TestControl
    var server: TestServer { control.server }

    init() async throws { control = try await .prepared() }

    // MARK: - Expiry and rotation

    @Test(
        "a token issued short expires; `token` refreshes once, the new token works, the next call sends nothing",
        arguments: SignInKind.allCases)
    func shortExpiryRefreshes(kind: SignInKind) async throws {
        let store = try ScratchStore()
        try await control.configure(["access_token_seconds": .integer(2)])
        try await store.signIn(kind, server: server)
        try await control.resetConfiguration()
        let old = try store.field("access_token", of: kind)
        let oldRefresh = try store.field("refresh_token", of: kind)
        try await Task.sleep(for: .seconds(2.5))
        try await control.resetStats()

        let first = try await ToolRunner.run(
            ["token"] + kind.selector(server), environment: ["PORTAL_AUTH_STORE": store.path])
        #expect(first.status == 0, "\(first)")
        let token = first.stdout.trimmingCharacters(in: .newlines)
        #expect(first.stdout == token + "\n")
        #expect(token != old && !token.isEmpty)
        #expect(try await control.stats().refreshes == 1)
        #expect(try await accepted(token, kind: kind))
        #expect(try await !accepted(old ?? "", kind: kind), "the short-lived token really expired")

        let second = try await ToolRunner.run(
            ["token"] + kind.selector(server), environment: ["PORTAL_AUTH_STORE": store.path])
        #expect(second.stdout == first.stdout)
        #expect(try await control.stats().total == 1, "a valid stored token is handed out without a request")
        #expect(
            first.leaksNone(of: [old, oldRefresh, try store.field("refresh_token", of: kind)], allowedOnStdout: token))
        #expect(first.stderr.isEmpty, "a refresh is silent: \(first.stderr)")
    }

    @Test("OIDC rotation: the newest refresh token is stored; the old one, reused, gets the server's invalid_grant")
    func rotationAndReuse() async throws {
        let store = try ScratchStore()
        try await store.signIn(.iap, server: server)
        let oldRefresh = try #require(try store.field("refresh_token", of: .iap))
        try await store.expireAccessToken(.iap, control: control)

        let result = try await ToolRunner.run(
            ["token", "--iap", server.iapConfig], environment: ["PORTAL_AUTH_STORE": store.path])
        #expect(result.status == 0, "\(result)")
        let newRefresh = try #require(try store.field("refresh_token", of: .iap))
        #expect(newRefresh != oldRefresh, "DOT rotates refresh tokens; the new one must be kept")

        // Send the rotated-out refresh token ourselves: DOT answers 400 invalid_grant, no description.
        let reuse = TransportRequest.form(
            URL(string: "\(server.issuer)/token/")!,
            fields: [
                ("grant_type", "refresh_token"), ("refresh_token", oldRefresh), ("client_id", server.clientID),
            ])
        let response = try await CurlHTTPClient().send(reuse)
        #expect(response.statusCode == 400)
        #expect(try JSONValue.parse(response.body)["error"]?.stringValue == "invalid_grant")
        let error = try #require(throws: TokenEndpointError.self) {
            try TokenResponse.parse(response, endpoint: reuse.url)
        }
        #expect(error.isInvalidGrant && error.requiresSignIn)

        // The kept (newest) refresh token still works.
        let forced = try await ToolRunner.run(
            ["refresh", "--iap", server.iapConfig], environment: ["PORTAL_AUTH_STORE": store.path])
        #expect(forced.status == 0, "\(forced)")
        #expect(try store.field("refresh_token", of: .iap) != newRefresh)
        #expect(result.leaksNone(of: [oldRefresh, newRefresh], allowedOnStdout: nil))
    }

    @Test(
        "portal face with rotation switched on: the rotated token is kept and the old one is refused in the ArcGIS envelope"
    )
    func portalRotation() async throws {
        let store = try ScratchStore()
        try await store.signIn(.portal, server: server)
        try await control.configure(["portal_rotate_refresh_tokens": .bool(true)])
        let oldRefresh = try #require(try store.field("refresh_token", of: .portal))
        let result = try await ToolRunner.run(
            ["refresh"] + SignInKind.portal.selector(server), environment: ["PORTAL_AUTH_STORE": store.path])
        try await control.resetConfiguration()
        #expect(result.status == 0, "\(result)")
        let newRefresh = try #require(try store.field("refresh_token", of: .portal))
        #expect(newRefresh != oldRefresh)
        #expect(try store.entry(.portal).value["refresh_token_expires_at"]?.integerValue != nil)

        let reuse = TransportRequest.form(
            URL(string: "\(server.portal)/sharing/rest/oauth2/token")!,
            fields: [
                ("grant_type", "refresh_token"), ("refresh_token", oldRefresh), ("client_id", server.clientID),
            ])
        let response = try await CurlHTTPClient().send(reuse)
        let envelope = try #require(ArcGISErrorEnvelope(body: response.body))
        #expect(response.statusCode == 200 && envelope.code == 400 && envelope.oauthError == "invalid_grant")
    }

    // MARK: - ArcGIS exchange

    @Test(
        "a portal refresh token older than the exchange interval is exchanged: exchange_refresh_token, new refresh token, old one dead"
    )
    func exchange() async throws {
        let store = try ScratchStore()
        // A 2-hour refresh token, exchanged once it is an hour old.
        try await store.signIn(
            .portal, server: server,
            extra: ["--refresh-token-expiration", "120", "--refresh-token-exchange-interval", "60"])
        let oldRefresh = try #require(try store.field("refresh_token", of: .portal))
        let oldAccess = try store.field("access_token", of: .portal)
        #expect(try store.entry(.portal).value["refresh_token_exchange_seconds"]?.integerValue == 3600)
        // As if the refresh token had been issued 61 minutes ago.
        let issued = try #require(try store.entry(.portal).value["refresh_token_issued_at"]?.integerValue)
        try await store.rewrite(.portal) { $0["refresh_token_issued_at"] = .integer(issued - 61 * 60) }
        try await control.resetStats()

        let result = try await ToolRunner.run(
            ["token"] + SignInKind.portal.selector(server), environment: ["PORTAL_AUTH_STORE": store.path])
        #expect(result.status == 0, "\(result)")
        let stats = try await control.stats()
        #expect(stats.exchanges == 1 && stats.refreshes == 0, "\(stats.byGrant)")
        let entry = try store.entry(.portal).value
        let newRefresh = try #require(entry["refresh_token"]?.stringValue)
        #expect(newRefresh != oldRefresh)
        let expiry = try #require(entry["refresh_token_expires_at"]?.doubleValue)
        #expect(abs(expiry - Date().timeIntervalSince1970 - 120 * 60) < 60, "a fresh full lifetime from the server")
        #expect(result.stdout != (oldAccess ?? "") + "\n")

        // The old refresh token is dead now; a second call does not exchange again.
        let reuse = TransportRequest.form(
            URL(string: "\(server.portal)/sharing/rest/oauth2/token")!,
            fields: [
                ("grant_type", "refresh_token"), ("refresh_token", oldRefresh), ("client_id", server.clientID),
            ])
        #expect(ArcGISErrorEnvelope(body: try await CurlHTTPClient().send(reuse).body)?.oauthError == "invalid_grant")
        try await control.resetStats()
        let again = try await ToolRunner.run(
            ["token"] + SignInKind.portal.selector(server), environment: ["PORTAL_AUTH_STORE": store.path])
        #expect(again.stdout == result.stdout)
        #expect(try await control.stats().total == 0)
    }

    // MARK: - Dead refresh token

    @Test(
        "a dead refresh token: exit 77 at once (one request), the server's reason, and the command that signs in",
        arguments: SignInKind.allCases)
    func deadRefreshToken(kind: SignInKind) async throws {
        let store = try ScratchStore()
        try await store.signIn(kind, server: server)
        try await control.expireRefreshTokens()
        try await store.expireAccessToken(kind, control: control)
        try await control.resetStats()
        let refresh = try store.field("refresh_token", of: kind)

        let result = try await ToolRunner.run(
            ["token"] + kind.selector(server), environment: ["PORTAL_AUTH_STORE": store.path])
        #expect(result.status == 77, "\(result)")
        #expect(try await control.stats().total == 1, "no retry of a refusal")
        #expect(result.stdout.isEmpty)
        switch kind {
        case .portal:
            #expect(result.stderr.contains("refresh_token expired"))
            #expect(
                result.stderr.contains("portal-auth login --portal \(server.portal) --client-id \(server.clientID)"))
        case .iap:
            #expect(result.stderr.contains("invalid_grant"))
            #expect(result.stderr.contains("portal-auth iap login --config \(server.iapConfig)"))
        }
        #expect(result.stderr.contains("no longer accepted"))
        #expect(result.leaksNone(of: [refresh, try store.field("access_token", of: kind)]))
    }

    // MARK: - Many processes

    @Test(
        "20 concurrent `token` processes on an expired token: one refresh request, one identical token",
        arguments: SignInKind.allCases)
    func concurrentProcesses(kind: SignInKind) async throws {
        let store = try ScratchStore()
        try await store.signIn(kind, server: server)
        try await store.expireAccessToken(kind, control: control)
        // A slow token endpoint: every process reads the expired token before the first refresh is written.
        try await control.configure(["token_delay_ms": .integer(400)])
        try await control.resetStats()

        let count = 20
        let clock = ContinuousClock()
        let start = clock.now
        let runs = try await ParallelRuns.run(
            count, arguments: ["token"] + kind.selector(server), environment: ["PORTAL_AUTH_STORE": store.path])
        let wall = start.duration(to: clock.now)
        try await control.resetConfiguration()

        let stats = try await control.stats()
        #expect(runs.allSatisfy { $0.status == 0 }, "\(runs.filter { $0.status != 0 })")
        #expect(stats.refreshes == 1, "\(stats.byGrant)")
        #expect(stats.total == 1)
        let tokens = Set(runs.map(\.stdout))
        #expect(tokens.count == 1)
        #expect(tokens.first == (try store.field("access_token", of: kind) ?? "") + "\n")
        #expect(try await accepted(tokens.first!.trimmingCharacters(in: .newlines), kind: kind))
        print("concurrent \(kind): \(count) processes, \(stats.refreshes) refresh request(s), wall \(wall)")
    }

    // MARK: - Killed mid-refresh

    @Test(
        "a process SIGKILLed while holding the lock mid-refresh: store readable, lock free, entry kept, next token works"
    )
    func killedHoldingLock() async throws {
        // The portal face does not rotate refresh tokens, so the refresh the killed process started is harmless.
        let store = try ScratchStore()
        try await store.signIn(.portal, server: server)
        try await store.expireAccessToken(.portal, control: control)
        let before = try store.entries()
        try await control.configure(["token_delay_ms": .integer(5000)])

        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: BinaryLocator.toolPath)
        process.arguments = ["token"] + SignInKind.portal.selector(server)
        process.environment = ProcessInfo.processInfo.environment.merging(["PORTAL_AUTH_STORE": store.path]) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let lockPath = store.path + ".lock"
        let pid = process.processIdentifier
        // The holder writes its process ID into the lock file once it has the lock.
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(10)
        while clock.now < deadline,
            (try? String(contentsOfFile: lockPath, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
                != "\(pid)"
        {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(try String(contentsOfFile: lockPath, encoding: .utf8).contains("\(pid)"), "the tool took the lock")
        try await Task.sleep(for: .milliseconds(300))  // now inside the slow token request
        kill(pid, SIGKILL)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal)
        try await control.resetConfiguration()

        // The lock is free at once (the kernel dropped the flock with the process) ...
        let descriptor = open(lockPath, O_RDWR)
        #expect(descriptor >= 0)
        #expect(flock(descriptor, LOCK_EX | LOCK_NB) == 0, "the lock was released by the kernel")
        flock(descriptor, LOCK_UN)
        close(descriptor)
        // ... the store still parses, with the entry and its refresh token as they were.
        let after = try store.entries()
        #expect(after.keys == before.keys)
        #expect(try store.field("refresh_token", of: .portal) == before.values.first?["refresh_token"]?.stringValue)

        try await control.resetStats()
        let next = try await ToolRunner.run(
            ["token"] + SignInKind.portal.selector(server), environment: ["PORTAL_AUTH_STORE": store.path])
        #expect(next.status == 0, "\(next)")
        #expect(try await control.stats().refreshes == 1)
        #expect(try await accepted(next.stdout.trimmingCharacters(in: .newlines), kind: .portal))
        let leftovers = try FileManager.default.contentsOfDirectory(
            atPath: (store.path as NSString).deletingLastPathComponent
        )
        .filter { $0.contains(".tmp-") }
        #expect(leftovers.isEmpty)
    }

    // MARK: - Identity provider down

    @Test(
        "the identity provider failing (503) during a refresh: bounded retries, exit 69, the stored sign-in kept",
        arguments: SignInKind.allCases)
    func providerFailing(kind: SignInKind) async throws {
        let store = try ScratchStore()
        try await store.signIn(kind, server: server)
        try await store.expireAccessToken(kind, control: control)
        let before = try Data(contentsOf: URL(fileURLWithPath: store.path))
        try await control.configure(["fail_next_token_requests": .integer(50), "fail_status": .integer(503)])
        try await control.resetStats()

        let result = try await ToolRunner.run(
            ["token"] + kind.selector(server), environment: ["PORTAL_AUTH_STORE": store.path])
        let stats = try await control.stats()
        try await control.resetConfiguration()
        #expect(result.status == 69, "\(result)")
        #expect(stats.refreshes == RefreshPolicy().attempts, "\(stats.byGrant)")
        #expect(result.stderr.contains("after 3 attempts") && result.stderr.contains("kept"))
        #expect(result.stdout.isEmpty)
        #expect(try Data(contentsOf: URL(fileURLWithPath: store.path)) == before, "the store is untouched")
        #expect(
            result.leaksNone(of: [
                try store.field("refresh_token", of: kind), try store.field("access_token", of: kind),
            ]))

        // Once the provider is back, the kept refresh token works.
        let next = try await ToolRunner.run(
            ["token"] + kind.selector(server), environment: ["PORTAL_AUTH_STORE": store.path])
        #expect(next.status == 0, "\(next)")
    }

    @Test("a token endpoint that refuses connections: retried, exit 69, the entry kept")
    func connectionRefused() async throws {
        let store = try ScratchStore()
        try await store.signIn(.portal, server: server)
        try await store.expireAccessToken(.portal, control: control)
        // Port 9 on loopback (discard) is closed here: the connection is refused.
        try await store.rewrite(.portal) {
            $0["token_url"] = .string("http://127.0.0.1:9/arcgis/sharing/rest/oauth2/token")
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: store.path))
        let result = try await ToolRunner.run(
            ["token"] + SignInKind.portal.selector(server), environment: ["PORTAL_AUTH_STORE": store.path])
        #expect(result.status == 69, "\(result)")
        #expect(result.stderr.contains("Could not connect") || result.stderr.contains("connect"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: store.path)) == before)
    }

    // MARK: - What a refresh starts

    @Test(
        "a forced refresh starts only its own threads (signal watcher, libcurl's loop), not Swift's global pool nor the blocking pool"
    )
    func refreshStartsNoGlobalPool() async throws {
        let store = try ScratchStore()
        try await store.signIn(.portal, server: server)
        let trace = store.directory.appendingPathComponent("trace")
        let result = try await ToolRunner.run(
            [
                "-f", "-qq", "-o", trace.path, "-e", "trace=clone,clone3,fork,vfork,epoll_create1,timerfd_create",
                "--", BinaryLocator.toolPath, "refresh",
            ] + SignInKind.portal.selector(server),
            environment: ["PORTAL_AUTH_STORE": store.path], executable: "/usr/bin/strace")
        #expect(result.status == 0, "\(result)")
        // "1234  clone3(…)" under -f: the call without the process ID ("<... clone3 resumed>" lines are not calls).
        let calls = try String(contentsOf: trace, encoding: .utf8).split(separator: "\n").map { line in
            String(line.drop { $0.isNumber }.drop { $0 == " " })
        }
        // The attempt's time limit is libcurl's own timer: a `Task.sleep` would start libdispatch's worker and
        // timer threads, its epoll and its timer file descriptors.
        #expect(
            !calls.contains { $0.hasPrefix("epoll_create1") || $0.hasPrefix("timerfd_create") },
            "Swift's global pool started: \(calls)")
        let threads = calls.filter { $0.hasPrefix("clone") || $0.hasPrefix("fork") || $0.hasPrefix("vfork") }
        // The signal watcher and libcurl's event loop; the store's reads and writes run on the command's own thread
        // (`CallerThreadExecutor`), not on the blocking pool.
        #expect(threads.count <= 2, "\(threads)")
    }

    // MARK: - Helpers

    /// Whether the server accepts `token`: the portal's `portals/self`, or the application behind the proxy.
    private func accepted(_ token: String, kind: SignInKind) async throws -> Bool {
        switch kind {
        case .portal:
            let response = try await server.get(
                "\(server.portal)/sharing/rest/portals/self?f=json",
                headers: [("X-Esri-Authorization", "Bearer \(token)")])
            return try JSONValue.parse(response.body)["user"]?["username"]?.stringValue == "alice"
        case .iap:
            let response = try await server.get(
                server.iapURL, headers: [("Authorization", "Bearer \(token)"), ("Accept", "application/json")])
            return response.statusCode == 200
        }
    }
}

/// Starts many `portal-auth` processes at once, output to files, and waits for all of them.
///
/// Not `ToolRunner`: twenty of its runs would tie up sixty Dispatch threads in blocking reads.
enum ParallelRuns {
    struct Run: Sendable {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    static func run(_ count: Int, arguments: [String], environment: [String: String]) async throws -> [Run] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pa-par-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var processes: [(ChildProcess, URL, URL)] = []
        for index in 0..<count {
            let out = directory.appendingPathComponent("\(index).out"),
                err = directory.appendingPathComponent("\(index).err")
            _ = FileManager.default.createFile(atPath: out.path, contents: nil)
            _ = FileManager.default.createFile(atPath: err.path, contents: nil)
            let process = ChildProcess()
            process.executableURL = URL(fileURLWithPath: BinaryLocator.toolPath)
            process.arguments = arguments
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            process.standardOutput = try FileHandle(forWritingTo: out)
            process.standardError = try FileHandle(forWritingTo: err)
            process.standardInput = FileHandle.nullDevice
            processes.append((process, out, err))
        }
        for (process, _, _) in processes { try process.run() }
        let started = Started(processes)
        let results: [Run] = try await BlockingWork.run {
            started.items.map { process, out, err in
                process.waitUntilExit()
                return Run(
                    status: process.terminationStatus,
                    stdout: (try? String(contentsOf: out, encoding: .utf8)) ?? "",
                    stderr: (try? String(contentsOf: err, encoding: .utf8)) ?? "")
            }
        }
        return results
    }

    /// The started processes, handed to the one thread that waits for them.
    private final class Started: @unchecked Sendable {
        let items: [(ChildProcess, URL, URL)]
        init(_ items: [(ChildProcess, URL, URL)]) { self.items = items }
    }
}
