import Foundation
import Glibc
import Testing
@testable import PortalAuth

/// The built tool against the real server, whose OIDC face rotates refresh tokens with no grace period (the
/// old one fails at once with `invalid_grant`): faults in the middle of a refresh must not cost the sign-in.
/// The server's `token_delay_ms` holds each token request before it is processed, so that a slow answer and a
/// signal during the request happen in a known order; no test measures time.
@Suite(
    "Sign-ins kept through faults mid-refresh", .serialized, .enabled(if: TestServer.isConfigured),
    .timeLimit(.minutes(5)))
struct MidRefreshSignInTests {
    let control: TestControl
    var server: TestServer { control.server }

    init() async throws { control = try await .prepared() }

    @Test(
        "a token endpoint answering after 11 s (past the old 9 s cut): one request, the rotated token stored, the sign-in alive"
    )
    func slowAnswerWaitedFor() async throws {
        let store = try ScratchStore()
        try await store.signIn(.iap, server: server)
        try await store.expireAccessToken(.iap, control: control)
        let before = try store.field("refresh_token", of: .iap)
        try await control.resetStats()
        try await control.configure(["token_delay_ms": .integer(11_000)])

        let result = try await ToolRunner.run(
            ["token"] + SignInKind.iap.selector(server), environment: ["PORTAL_AUTH_STORE": store.path],
            timeout: .seconds(120))
        let stats = try await control.stats()
        try await control.resetConfiguration()

        #expect(result.status == 0, "\(result)")
        #expect(stats.refreshes == 1, "the refresh token was sent again: \(stats.byGrant), errors \(stats.errors)")
        #expect(try store.field("refresh_token", of: .iap) != before, "the rotated refresh token was not stored")
        let next = try await ToolRunner.run(
            ["refresh"] + SignInKind.iap.selector(server), environment: ["PORTAL_AUTH_STORE": store.path],
            timeout: .seconds(60))
        #expect(next.status == 0, "the sign-in did not survive: \(next)")
    }

    @Test(
        "the terminal closing (SIGHUP), SIGQUIT or SIGUSR1 while a refresh request is out: the rotated token is stored, the sign-in alive"
    )
    func signalMidRefresh() async throws {
        let store = try ScratchStore()
        try await store.signIn(.iap, server: server)
        for (name, number) in [("SIGHUP", SIGHUP), ("SIGQUIT", SIGQUIT), ("SIGUSR1", SIGUSR1)] {
            try await store.expireAccessToken(.iap, control: control)
            let before = try store.field("refresh_token", of: .iap)
            try await control.resetStats()
            try await control.configure(["token_delay_ms": .integer(3000)])

            let tool = try BackgroundTool.start(
                ["token"] + SignInKind.iap.selector(server), environment: ["PORTAL_AUTH_STORE": store.path])
            defer { if tool.process.isRunning { kill(tool.process.processIdentifier, SIGKILL) } }
            // The server counts the request before holding it: the signal comes while the answer is awaited.
            try await waitUntil("the refresh request reached the server") { try await control.stats().refreshes >= 1 }
            kill(tool.process.processIdentifier, number)
            try await waitUntil("the tool exited") { !tool.process.isRunning }
            try await control.resetConfiguration()

            #expect(tool.process.terminationReason == .exit, "\(name) killed the tool mid-refresh")
            #expect(try store.field("refresh_token", of: .iap) != before, "\(name): the rotated refresh token was lost")
            #expect(try await control.stats().refreshes == 1, "\(name)")
            let next = try await ToolRunner.run(
                ["refresh"] + SignInKind.iap.selector(server), environment: ["PORTAL_AUTH_STORE": store.path],
                timeout: .seconds(60))
            #expect(next.status == 0, "\(name): the sign-in did not survive: \(next)")
        }
    }

    @Test(
        "the lock file deleted while one `token` refreshes: a second `token` waits instead of reusing the refresh token"
    )
    func lockFileDeletedMidRefresh() async throws {
        let store = try ScratchStore()
        try await store.signIn(.iap, server: server)
        try await store.expireAccessToken(.iap, control: control)
        try await control.resetStats()
        try await control.configure(["token_delay_ms": .integer(3000)])

        let first = try BackgroundTool.start(
            ["token"] + SignInKind.iap.selector(server), environment: ["PORTAL_AUTH_STORE": store.path])
        defer { if first.process.isRunning { kill(first.process.processIdentifier, SIGKILL) } }
        // The first process holds the lock and its request is out; then the lock file goes.
        try await waitUntil("the first refresh reached the server") { try await control.stats().refreshes >= 1 }
        #expect(unlink(store.path + ".lock") == 0)
        let second = try await ToolRunner.run(
            ["token"] + SignInKind.iap.selector(server), environment: ["PORTAL_AUTH_STORE": store.path],
            timeout: .seconds(90))
        try await waitUntil("the first tool exited") { !first.process.isRunning }
        let stats = try await control.stats()
        try await control.resetConfiguration()

        #expect(first.process.terminationStatus == 0)
        #expect(second.status == 0, "\(second)")
        #expect(stats.refreshes == 1, "a second refresh ran beside the first: \(stats.byGrant), errors \(stats.errors)")
        #expect(second.stdout.trimmingCharacters(in: .newlines) == (try store.field("access_token", of: .iap)))
        let next = try await ToolRunner.run(
            ["refresh"] + SignInKind.iap.selector(server), environment: ["PORTAL_AUTH_STORE": store.path],
            timeout: .seconds(60))
        #expect(next.status == 0, "the sign-in did not survive: \(next)")
    }

    @Test(
        "a full disk: `token` sends nothing and exits 70 saying so; once there is room the stored sign-in refreshes",
        .enabled(
            if: geteuid() == 0, "needs root to mount a small tmpfs (run the integration tests as root to include it)"))
    func diskFull() async throws {
        let signedIn = try ScratchStore()
        try await signedIn.signIn(.iap, server: server)
        try await signedIn.expireAccessToken(.iap, control: control)
        let mountPoint = signedIn.directory.appendingPathComponent("small").path
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: false)
        #expect(try Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=512k,mode=0700", "tmpfs", mountPoint]) == 0)
        defer {
            _ = try? Self.run("/bin/umount", ["-l", mountPoint])
            withExtendedLifetime(signedIn) {}
        }
        // The signed-in store, copied onto the small file system (0700 folder, 0600 file).
        let path = mountPoint + "/state/credentials.json"
        try FileManager.default.createDirectory(
            atPath: mountPoint + "/state", withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        try FileManager.default.copyItem(atPath: signedIn.path, toPath: path)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        // Full: a file grown until nothing more fits.
        let filler = mountPoint + "/filler"
        let descriptor = open(filler, O_WRONLY | O_CREAT, 0o600)
        let page = [UInt8](repeating: 0, count: 4096)
        while page.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) > 0 {}
        while page.withUnsafeBytes({ write(descriptor, $0.baseAddress, 1) }) > 0 {}
        close(descriptor)
        try await control.resetStats()

        let full = try await ToolRunner.run(
            ["token"] + SignInKind.iap.selector(server), environment: ["PORTAL_AUTH_STORE": path])
        #expect(full.status == 70, "\(full)")
        #expect(full.stderr.contains("No space left") && full.stderr.contains("nothing was sent"), "\(full.stderr)")
        #expect(
            try await control.stats().refreshes == 0,
            "the refresh token was spent although its successor could not be stored")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)

        unlink(filler)
        let roomy = try await ToolRunner.run(
            ["token"] + SignInKind.iap.selector(server), environment: ["PORTAL_AUTH_STORE": path])
        #expect(roomy.status == 0, "the sign-in did not survive: \(roomy)")
        #expect(try await control.stats().refreshes == 1)
    }

    @Test(
        "a refreshed ID token that is not a JWT: `token` keeps the rotated tokens and warns; the next refresh brings a good one"
    )
    func badIDToken() async throws {
        let proxy = try await FaultProxy.start(upstream: server.base)
        defer { proxy.stop() }
        let store = try ScratchStore()
        // The IAP configuration with its token endpoint on the proxy, so that the refresh answer can be spoilt (the
        // authorize endpoint stays the server's: an issuer of another origin than the authorize URL is refused).
        let config = store.directory.appendingPathComponent("iap-through-proxy.json").path
        let text = try String(contentsOfFile: server.iapConfig, encoding: .utf8)
            .replacingOccurrences(of: server.base + "/o/token/", with: proxy.base + "/o/token/")
        try text.write(toFile: config, atomically: true, encoding: .utf8)
        let proxied = TestServer(
            base: proxy.base, portal: server.portal, clientID: server.clientID, iapConfig: config,
            iapURL: server.iapURL,
            browser: server.browser, issuer: server.issuer, testControl: server.testControl)
        try await store.signIn(.iap, server: proxied)
        let refreshBefore = try store.field("refresh_token", of: .iap)
        let idBefore = try #require(try store.field("id_token", of: .iap))

        try await proxy.arm("bad-id-token", count: 1)
        try await store.ageAccessToken(.iap)
        let spoilt = try await ToolRunner.run(
            ["token", "--iap", config, "--min-valid", "100000"], environment: ["PORTAL_AUTH_STORE": store.path],
            timeout: .seconds(60))
        #expect(try await proxy.state().faulted == 1)
        #expect(spoilt.status == 0, "\(spoilt)")
        #expect(
            spoilt.stderr.contains("warning") && spoilt.stderr.contains("was refused")
                && spoilt.stderr.contains("kept"), "\(spoilt.stderr)")
        #expect(try store.field("refresh_token", of: .iap) != refreshBefore, "the rotated refresh token was dropped")
        #expect(try store.field("id_token", of: .iap) == idBefore, "the ID token accepted before stays")
        #expect(try store.entry(.iap).value["id_token_refused"]?.stringValue != nil)
        #expect(spoilt.leaksNone(of: [try store.field("refresh_token", of: .iap), idBefore]))

        _ = try await proxy.clear()
        let next = try await ToolRunner.run(
            ["refresh", "--iap", config], environment: ["PORTAL_AUTH_STORE": store.path], timeout: .seconds(60))
        #expect(next.status == 0, "the sign-in did not survive: \(next)")
        #expect(try store.field("id_token", of: .iap) != idBefore)
        #expect(try store.entry(.iap).value["id_token_refused"] == nil, "a good ID token clears the refusal")
        let idToken = try await ToolRunner.run(
            ["token", "--iap", config, "--id-token"], environment: ["PORTAL_AUTH_STORE": store.path],
            timeout: .seconds(60))
        #expect(idToken.status == 0, "\(idToken)")
        #expect(idToken.stdout.trimmingCharacters(in: .newlines) == (try store.field("id_token", of: .iap)))
        #expect(!idToken.stderr.contains("warning"))
    }

    /// Runs a system tool; its exit status.
    private static func run(_ tool: String, _ arguments: [String]) throws -> Int32 {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
}
