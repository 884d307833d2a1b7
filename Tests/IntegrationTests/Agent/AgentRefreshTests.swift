import Foundation
import Glibc
import Testing

@testable import PortalAuth

/// The agent against the real server (issue 46, "the store stays the truth"): the agent and `portal-auth token`
/// processes together make one refresh per expiry, a token the agent keeps in memory is not handed out once the
/// store changed, and an agent killed with SIGKILL in the middle of a refresh loses no sign-in. The server's
/// `token_delay_ms` holds each token request so that the processes overlap; no test measures time.
@Suite(
    "The agent and the tool: one refresh per expiry; a killed agent loses no sign-in", .serialized,
    .enabled(if: TestServer.isConfigured), .timeLimit(.minutes(5)))
struct AgentRefreshTests {
    let control: TestControl
    var server: TestServer { control.server }

    init() async throws { control = try await .prepared() }

    /// `portal-auth agent` on `store`, its socket in the scratch folder.
    final class Agent {
        let socket: String
        let tool: BackgroundTool

        init(_ store: ScratchStore) throws {
            socket = store.directory.appendingPathComponent("run/agent.sock").path
            tool = try BackgroundTool.start(
                ["agent", "--socket", socket], environment: ["PORTAL_AUTH_STORE": store.path])
            let said = tool.stderr(until: "agent serving on")
            guard said.contains("agent serving on") else {
                stop()
                throw AgentCommandTests.AgentStartFailure(output: said)
            }
        }

        func stop() {
            if tool.process.isRunning {
                kill(tool.process.processIdentifier, SIGTERM)
                tool.process.waitUntilExit()
            }
        }

        deinit { stop() }
    }

    @Test(
        "an expired token asked for at once by the agent (for 3 clients) and 3 `token` processes on the store: one refresh, one token; request: a proxy's 401 to an hour-old token is one refresh, through the agent as from the store"
    )
    func oneRefreshPerExpiry() async throws {
        let store = try ScratchStore()
        try await store.signIn(.iap, server: server)
        let agent = try Agent(store)
        defer { agent.stop() }
        let selector = SignInKind.iap.selector(server)
        let throughStore = ["PORTAL_AUTH_STORE": store.path, "PORTAL_AUTH_AGENT": "off"]
        let throughAgent = ["PORTAL_AUTH_STORE": store.path, "PORTAL_AUTH_AGENT": agent.socket]
        // The agent keeps the current token in memory ...
        let first = try await ToolRunner.run(["token"] + selector, environment: throughAgent)
        #expect(first.status == 0, "\(first)")
        // ... which must not be handed out once the store says it expired.
        try await store.expireAccessToken(.iap, control: control)
        try await control.resetStats()
        try await control.configure(["token_delay_ms": .integer(1500)])

        let results = try await withThrowingTaskGroup(of: ToolRunner.Result.self) { group in
            for index in 0..<6 {
                let environment = index.isMultiple(of: 2) ? throughAgent : throughStore
                group.addTask {
                    try await ToolRunner.run(["token"] + selector, environment: environment, timeout: .seconds(120))
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let stats = try await control.stats()
        try await control.resetConfiguration()

        for result in results { #expect(result.status == 0, "\(result)") }
        #expect(stats.refreshes == 1, "refreshes by grant \(stats.byGrant), errors \(stats.errors)")
        let tokens = Set(results.map(\.stdout))
        #expect(tokens.count == 1, "one token for all")
        #expect(!tokens.contains(first.stdout), "the expired token was handed out again")

        // `request` to the host behind the proxy, through the agent and from the store: the access token, issued an
        // hour ago and refused by the proxy (401, expired on the server only), is refreshed once and sent again; the
        // same output and exit status either way (the 60 s rule of the store path, applied to the agent's token).
        let request = ["request", "--proxy-token", "access", "-H", "Accept: application/json", server.iapURL]
        var answers: [ToolRunner.Result] = []
        for environment in [throughAgent, throughStore] {
            let hourAgo = Int64(Date().timeIntervalSince1970) - 3600
            try await store.rewrite(.iap) {
                $0["updated_at"] = .integer(hourAgo)
                $0["access_token_issued_at"] = .integer(hourAgo)
            }
            try await control.expireAccessTokens()
            try await control.resetStats()
            let result = try await ToolRunner.run(request, environment: environment, timeout: .seconds(60))
            let stats = try await control.stats()
            #expect(result.status == 0, "\(environment): \(result)")
            #expect(stats.refreshes == 1, "\(environment): refreshes by grant \(stats.byGrant)")
            answers.append(result)
        }
        #expect(answers[0].stdout == answers[1].stdout, "\(answers)")
        #expect(answers[0].stderr == answers[1].stderr, "\(answers)")
        #expect(try JSONValue.parse(Data(answers[0].stdout.utf8))["token_kind"]?.stringValue == "access")
    }

    @Test(
        "request through the agent: a token the portal refuses (498, expired on the server only) is refreshed once by the agent, as on the store path"
    )
    func refusedTokenRefreshedByTheAgent() async throws {
        let store = try ScratchStore()
        try await store.signIn(.portal, server: server)
        let agent = try Agent(store)
        defer { agent.stop() }
        let arguments = ["request", "\(server.portal)/sharing/rest/portals/self?f=json"]
        let throughAgent = ["PORTAL_AUTH_STORE": store.path, "PORTAL_AUTH_AGENT": agent.socket]
        let throughStore = ["PORTAL_AUTH_STORE": store.path, "PORTAL_AUTH_AGENT": "off"]
        for environment in [throughAgent, throughStore] {
            // Issued a while ago (a token refused in its first second or two would be asked for beyond its lifetime,
            // which the agent answers with the same token: TokenFreshness's short-lifetime rule).
            try await store.ageAccessToken(.portal)
            try await control.expireAccessTokens()
            try await control.resetStats()
            let result = try await ToolRunner.run(arguments, environment: environment, timeout: .seconds(60))
            let stats = try await control.stats()
            #expect(result.status == 0, "\(result)")
            #expect(result.stdout.contains("alice"), "\(result)")
            #expect(stats.refreshes == 1, "\(environment): refreshes by grant \(stats.byGrant)")
        }
    }

    @Test(
        "SIGTERM while the agent's refresh request is out: the agent stops once the answer is stored, not before"
    )
    func agentStoppedMidRefresh() async throws {
        let store = try ScratchStore()
        try await store.signIn(.portal, server: server)
        let selector = SignInKind.portal.selector(server)
        let agent = try Agent(store)
        defer { agent.stop() }
        try await store.expireAccessToken(.portal, control: control)
        let expired = try store.field("access_token", of: .portal)
        try await control.resetStats()
        try await control.configure(["token_delay_ms": .integer(3000)])
        defer { Task { try? await control.resetConfiguration() } }

        let client = try BackgroundTool.start(
            ["token"] + selector, environment: ["PORTAL_AUTH_STORE": store.path, "PORTAL_AUTH_AGENT": agent.socket])
        defer { if client.process.isRunning { kill(client.process.processIdentifier, SIGKILL) } }
        try await waitUntil("the agent's refresh request reached the server") {
            try await control.stats().refreshes >= 1
        }
        // The agent stops serving at SIGTERM, and waits for the refresh in progress before it exits.
        kill(agent.tool.process.processIdentifier, SIGTERM)
        try await waitUntil("the agent ended after SIGTERM") { !agent.tool.process.isRunning }
        #expect(agent.tool.process.terminationReason == .exit, "the agent did not end by itself")
        try await control.resetConfiguration()
        let refreshed = try store.field("access_token", of: .portal)
        #expect(refreshed != nil && refreshed != expired, "the refresh the agent sent was not stored")
        let next = try await ToolRunner.run(
            ["token"] + selector, environment: ["PORTAL_AUTH_STORE": store.path, "PORTAL_AUTH_AGENT": "off"])
        #expect(next.status == 0, "\(next)")
        #expect(try await control.stats().refreshes == 1, "the stored answer served the next `token`")
    }

    @Test(
        "the agent SIGKILLed while its refresh request is out: the sign-in survives, `token` works, a new agent serves"
    )
    func agentKilledMidRefresh() async throws {
        // The portal face does not rotate refresh tokens, so the refresh the killed agent started is harmless.
        let store = try ScratchStore()
        try await store.signIn(.portal, server: server)
        let selector = SignInKind.portal.selector(server)
        let before = try store.field("refresh_token", of: .portal)
        let agent = try Agent(store)
        defer { agent.stop() }
        try await store.expireAccessToken(.portal, control: control)
        try await control.resetStats()
        try await control.configure(["token_delay_ms": .integer(5000)])

        let client = try BackgroundTool.start(
            ["token"] + selector, environment: ["PORTAL_AUTH_STORE": store.path, "PORTAL_AUTH_AGENT": agent.socket])
        defer { if client.process.isRunning { kill(client.process.processIdentifier, SIGKILL) } }
        // The server counts the request before holding it: the agent is killed while the answer is awaited.
        try await waitUntil("the agent's refresh request reached the server") {
            try await control.stats().refreshes >= 1
        }
        kill(agent.tool.process.processIdentifier, SIGKILL)
        agent.tool.process.waitUntilExit()
        #expect(agent.tool.process.terminationReason == .uncaughtSignal)
        try await waitUntil("the client was told") { !client.process.isRunning }
        #expect(client.process.terminationStatus != 0, "the client got no token from a killed agent")
        try await control.resetConfiguration()

        // The store parses, with the sign-in as it was.
        #expect(try store.field("refresh_token", of: .portal) == before)
        let next = try await ToolRunner.run(
            ["token"] + selector, environment: ["PORTAL_AUTH_STORE": store.path, "PORTAL_AUTH_AGENT": "off"])
        #expect(next.status == 0, "the sign-in did not survive: \(next)")

        // A new agent takes the socket the killed one left, and serves the refreshed token.
        let again = try Agent(store)
        defer { again.stop() }
        let served = try await ToolRunner.run(
            ["token"] + selector, environment: ["PORTAL_AUTH_STORE": store.path, "PORTAL_AUTH_AGENT": again.socket])
        #expect(served.status == 0, "\(served)")
        #expect(served.stdout == next.stdout)
    }
}
