import Foundation
import Testing
@testable import PortalAuth

/// The tool against an instance of the project's authorization server of its own (its own run directory and port; the
/// shared instance keeps its lifetimes) that issues 20-second access tokens and 30-second ID tokens, shorter than the
/// default `--min-valid 300`: a token is used for the first half of its lifetime, whoever refreshed it, and refreshed
/// once then; `request` and `token --url` go on after a refresh brought a new 30-second ID token.
///
/// Nothing here races the wall clock: the tests wait for a token to age by polling `status`, and a check that "no
/// second refresh" happened is made only when the stored issue time shows that everything ran within the token's
/// first half (else the round is tried again; the bounds only guard against hangs).
@Suite(
    "Short-lived tokens against the project's server", .serialized, .enabled(if: TestServer.isConfigured),
    .timeLimit(.minutes(6)))
struct ShortTokenTests {
    static let accessSeconds = 20
    static let idSeconds = 30

    /// This suite's own server, and a store signed in to it with its IAP configuration.
    static func signedIn() async throws -> (ShortTokenServer, ScratchStore) {
        let server = try await ShortTokenServer.start(accessSeconds: accessSeconds, idSeconds: idSeconds)
        do {
            let store = try ScratchStore()
            try await server.signIn(store)
            return (server, store)
        } catch {
            server.stop()
            throw error
        }
    }

    /// Runs `round` once the stored access token is past half its lifetime (the server's counts reset first), until a
    /// round ends within the first half of the token it refreshed — by the issue time stored with it —, and gives that
    /// round's results; nil when three rounds did not (only a hang does that).
    static func roundWithinFirstHalf(
        _ server: ShortTokenServer, _ store: ScratchStore, _ round: () async throws -> [ToolRunner.Result]
    ) async throws -> [ToolRunner.Result]? {
        for _ in 0..<3 {
            try await server.waitForAge(of: "access_token", beyondHalfOf: accessSeconds, store: store)
            try await server.control.resetStats()
            let results = try await round()
            let finished = Date()
            #expect(results.allSatisfy { $0.status == 0 }, "\(results)")
            if let issued = try store.issuedAt("access_token"),
                finished.timeIntervalSince(issued) < Double(accessSeconds) / 2 - 1
            {
                return results
            }
        }
        return nil
    }

    @Test("token twice within the first half of a 20-second token: one refresh; the warning says the fix, once")
    func tokenTwice() async throws {
        let (server, store) = try await Self.signedIn()
        defer { server.stop() }
        let first = try await ToolRunner.run(["token"], environment: server.environment(store))
        #expect(first.status == 0, "\(first)")
        #expect(
            first.stderr.contains("--min-valid \(Self.accessSeconds / 2) or less"),
            "the warning gives the fix: \(first)")
        let second = try await ToolRunner.run(["token"], environment: server.environment(store))
        #expect(second.status == 0, "\(second)")
        #expect(!second.stderr.contains("warning"), "said once for this sign-in: \(second)")

        let round = try await Self.roundWithinFirstHalf(server, store) {
            [
                try await ToolRunner.run(["token"], environment: server.environment(store)),
                try await ToolRunner.run(["token"], environment: server.environment(store)),
            ]
        }
        let results = try #require(round, "no round ran within the token's first half (a hang)")
        #expect(try await server.control.stats().refreshes == 1)
        #expect(results[0].stdout == results[1].stdout, "the second call prints the token the first refreshed")
        #expect(results.allSatisfy { !$0.stderr.contains("warning") }, "\(results)")
    }

    @Test("6 token processes at once on a stale 20-second token: one refresh, one token")
    func concurrentProcesses() async throws {
        let (server, store) = try await Self.signedIn()
        defer { server.stop() }
        let environment = server.environment(store)
        let round = try await Self.roundWithinFirstHalf(server, store) {
            try await withThrowingTaskGroup(of: ToolRunner.Result.self) { group in
                for _ in 0..<6 { group.addTask { try await ToolRunner.run(["token"], environment: environment) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        let results = try #require(round, "no round ran within the token's first half (a hang)")
        #expect(try await server.control.stats().refreshes == 1)
        #expect(Set(results.map(\.stdout)).count == 1, "every process printed the same token")
    }

    @Test(
        "request and token --url to the host behind the proxy after the 30-second ID token was refreshed",
        arguments: ["request", "token"])
    func proxiedHostAfterRefresh(command: String) async throws {
        let (server, store) = try await Self.signedIn()
        defer { server.stop() }
        let signedInIDToken = try #require(try store.field("id_token", of: .iap))
        try await server.waitForAge(of: "id_token", beyondHalfOf: Self.idSeconds, store: store)
        try await server.control.resetStats()
        let arguments = command == "request" ? ["request", server.iapURL] : ["token", "--url", server.iapURL]
        let result = try await ToolRunner.run(arguments, environment: server.environment(store))
        #expect(result.status == 0, "\(result)")
        #expect(!result.stderr.contains("sent no new one"), "\(result)")
        #expect(try await server.control.stats().refreshes == 1)
        let newIDToken = try #require(try store.field("id_token", of: .iap))
        let renewed = newIDToken != signedInIDToken
        #expect(renewed, "the refresh brought a new ID token")
        if command == "request" {
            #expect(
                result.stdout.contains(#""token_kind": "id""#) || result.stdout.contains(#""token_kind":"id""#),
                "\(result)")
        } else {
            let printsNewIDToken = result.stdout.trimmingCharacters(in: .newlines) == newIDToken
            #expect(printsNewIDToken, "token --url prints the new ID token (not shown)")
        }
    }
}

/// An instance of `scripts/authserver` of the tests' own, in a run directory of its own (so an ephemeral port of its
/// own), with the token lifetimes asked; stopped with `stop()`.
struct ShortTokenServer: Sendable {
    let runDirectory: URL
    let variables: [String: String]
    let server: TestServer
    var control: TestControl { TestControl(server: server) }
    var iapURL: String { server.iapURL }

    static let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/authserver")

    /// Starts the instance (`scripts/authserver start` waits for its health check) and reads its environment file.
    static func start(accessSeconds: Int, idSeconds: Int) async throws -> ShortTokenServer {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pa-short-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let status = try await run(
            ["start"], runDirectory: directory,
            extra: [
                "PORTAL_AUTH_TEST_ACCESS_TOKEN_SECONDS": "\(accessSeconds)",
                "PORTAL_AUTH_TEST_ID_TOKEN_SECONDS": "\(idSeconds)",
            ])
        guard status == 0 else {
            _ = try? await run(["stop"], runDirectory: directory)
            throw TestFailure("scripts/authserver start (run directory \(directory.path)) exited \(status)")
        }
        let text = try String(contentsOf: directory.appendingPathComponent("authserver.env"), encoding: .utf8)
        var variables: [String: String] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("export ") {
            let assignment = line.dropFirst("export ".count)
            guard let equals = assignment.firstIndex(of: "=") else { continue }
            var value = String(assignment[assignment.index(after: equals)...])
            if value.count >= 2, let quote = value.first, quote == "'" || quote == "\"", value.last == quote {
                value = String(value.dropFirst().dropLast())
            }
            variables[String(assignment[..<equals])] = value
        }
        func value(_ name: String) throws -> String {
            try #require(variables[name], "\(name) missing from \(directory.path)/authserver.env")
        }
        let server = TestServer(
            base: try value("PORTAL_AUTH_TEST_SERVER"), portal: try value("PORTAL_AUTH_TEST_PORTAL"),
            clientID: try value("PORTAL_AUTH_TEST_CLIENT_ID"), iapConfig: try value("PORTAL_AUTH_TEST_IAP_CONFIG"),
            iapURL: try value("PORTAL_AUTH_TEST_IAP_URL"), browser: try value("PORTAL_AUTH_TEST_BROWSER"),
            issuer: try value("PORTAL_AUTH_TEST_ISSUER"), testControl: try value("PORTAL_AUTH_TEST_TESTCTL"))
        return ShortTokenServer(runDirectory: directory, variables: variables, server: server)
    }

    /// Stops the instance and removes its run directory.
    func stop() {
        let directory = runDirectory
        let stopper = ChildProcess()
        stopper.executableURL = Self.script
        stopper.arguments = ["stop"]
        stopper.environment = Self.environment(runDirectory: directory, extra: [:])
        stopper.standardOutput = FileHandle.nullDevice
        stopper.standardError = FileHandle.nullDevice
        if (try? stopper.run()) != nil { stopper.waitUntilExit() }
        try? FileManager.default.removeItem(at: directory)
    }

    /// This process's environment for the script: without the shared instance's settings, with this run directory.
    private static func environment(runDirectory: URL, extra: [String: String]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PORTAL_AUTH_TEST_") }
        environment["PORTAL_AUTH_RUN_DIR"] = runDirectory.path
        environment.merge(extra) { $1 }
        return environment
    }

    private static func run(_ arguments: [String], runDirectory: URL, extra: [String: String] = [:]) async throws
        -> Int32
    {
        try await BlockingWork.run {
            let process = ChildProcess()
            process.executableURL = script
            process.arguments = arguments
            process.environment = environment(runDirectory: runDirectory, extra: extra)
            let log = runDirectory.appendingPathComponent("script.log")
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            let handle = try FileHandle(forWritingTo: log)
            defer { try? handle.close() }
            process.standardOutput = handle
            process.standardError = handle
            try process.run()
            process.waitUntilExit()
            return process.terminationStatus
        }
    }

    /// The tool's environment for `store` against this instance: the browser signs in with this instance's user.
    func environment(_ store: ScratchStore) -> [String: String] {
        var environment = ["PORTAL_AUTH_STORE": store.path, "PORTAL_AUTH_TEST_BROWSER_TIMEOUT": "60"]
        for name in [
            "PORTAL_AUTH_TEST_USERNAME", "PORTAL_AUTH_TEST_PASSWORD_FILE", "PORTAL_AUTH_TEST_SERVER",
            "PORTAL_AUTH_TEST_RUN_DIR",
        ] {
            environment[name] = variables[name]
        }
        environment["PORTAL_AUTH_TEST_BROWSER_LOG"] = runDirectory.appendingPathComponent("browser.log").path
        return environment
    }

    /// Signs in with this instance's IAP configuration through the real browser.
    func signIn(_ store: ScratchStore) async throws {
        let result = try await ToolRunner.run(
            ["iap", "login", "--config", server.iapConfig, "--browser-command", server.browser, "--timeout", "90"],
            environment: environment(store), timeout: .seconds(120))
        try #require(result.status == 0, "sign-in failed: \(result)")
    }

    /// Polls `portal-auth status --format json` until the stored `token` (`access_token`, `id_token`) is past half its
    /// `lifetime`, with a second to spare (the tool's rule then refreshes it); a minute is only a hang guard.
    func waitForAge(of token: String, beyondHalfOf lifetime: Int, store: ScratchStore) async throws {
        let giveUp = Date().addingTimeInterval(60 + Double(lifetime))
        while Date() < giveUp {
            let status = try await ToolRunner.run(["status", "--format", "json"], environment: environment(store))
            let json = try JSONValue.parse(Data(status.stdout.utf8))
            let credential = json["credentials"]?.arrayValue?.first
            if let text = credential?["\(token)_expires_at"]?.stringValue,
                let expiry = ISO8601DateFormatter().date(from: text),
                expiry.timeIntervalSinceNow < Double(lifetime) / 2 - 1
            {
                return
            }
            try await Task.sleep(for: .milliseconds(500))
        }
        Issue.record("the \(token) did not age past half its \(lifetime) s within a minute")
        throw CancellationError()
    }
}

extension ScratchStore {
    /// When the IAP entry's `token` (`access_token`, `id_token`) was issued, as stored.
    func issuedAt(_ token: String) throws -> Date? {
        try entry(.iap).value["\(token)_issued_at"]?.doubleValue.map { Date(timeIntervalSince1970: $0) }
    }
}
