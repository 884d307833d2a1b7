import Foundation
import Glibc
import Testing

@testable import PortalAuth

/// `portal-auth request` through the agent (issue 46): against a loopback ArcGIS-like server that answers 499 Token
/// Required without a token and echoes the token it got, the output and exit status are those of the store path.
@Suite("portal-auth request through the agent", .serialized, .timeLimit(.minutes(3)))
struct AgentRequestTests {
    @Test(
        "request (body, json, --fail): the same output and exit status through the agent as from the store, one request on the socket per run; nothing stored: the same 77",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")))
    func sameOutputThroughTheAgent() async throws {
        let store = try PreparedStore()
        let server = try EchoServer(folder: store.directory)
        defer { server.stop() }
        try await store.write([PreparedStore.portal(server.portal, token: "stored-token-7")])
        let empty = try PreparedStore()
        try await empty.write([])
        let agent = try AgentCommandTests.RunningAgent(store)
        defer { agent.stop() }
        let url = "\(server.portal)/sharing/rest/portals/self?f=json"
        for arguments in [["request", url], ["request", "--format", "json", url], ["request", "--fail", url]] {
            let direct = try await ToolRunner.run(arguments, environment: store.environment)
            let viaAgent = try await ToolRunner.run(
                arguments, environment: AgentCommandTests.throughAgent(agent, empty: empty))
            #expect(direct.status == 0, "\(direct)")
            #expect(direct.stdout.contains("stored-token-7"), "the server got the stored token: \(direct)")
            #expect(viaAgent.status == direct.status, "\(viaAgent)")
            #expect(viaAgent.stdout == direct.stdout, "\(viaAgent)")
            #expect(viaAgent.stderr == direct.stderr, "\(viaAgent)")
        }
        // One request on the socket per run: the token request itself tells that an agent serves (no status first).
        guard case .status(let status) = try agent.ask(.status) else {
            Issue.record("the agent answered no status")
            return
        }
        #expect(status["answered"]?.integerValue == 3, "one token request for each of 3 runs: \(status)")

        // The agent's store holds nothing for the URL: 77 and the same words as the store path's.
        let bare = try AgentCommandTests.RunningAgent(empty)
        defer { bare.stop() }
        let direct = try await ToolRunner.run(["request", url], environment: empty.environment)
        let viaAgent = try await ToolRunner.run(
            ["request", url], environment: AgentCommandTests.throughAgent(bare, empty: store))
        #expect(direct.status == 77, "\(direct)")
        #expect(viaAgent.status == 77, "the agent's store, empty, is the one used: \(viaAgent)")
        #expect(viaAgent.stderr == direct.stderr, "\(viaAgent)")
        #expect(viaAgent.stdout.isEmpty)

        // An agent named but not listening: request reads its own store.
        let gone = store.environment.merging([
            "PORTAL_AUTH_AGENT": agent.folder.appendingPathComponent("none.sock").path
        ]) { $1 }
        let fallback = try await ToolRunner.run(["request", url], environment: gone)
        #expect(fallback.status == 0, "\(fallback)")
        #expect(fallback.stdout.contains("stored-token-7"), "\(fallback)")
    }
}
