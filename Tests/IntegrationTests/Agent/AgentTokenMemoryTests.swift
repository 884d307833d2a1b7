import Foundation
import Glibc
import Testing

@testable import PortalAuth

/// The agent's tokens kept in memory (issue 46): a token it handed out is handed out again without reading the
/// store while the store's files are unchanged and the token is valid for `min_valid`; a longer `min_valid`, or a
/// store written by another process, reads the store again. The store is made unreadable (its folder made writable by
/// others, which every read refuses) without touching the store file, so that only an answer from memory succeeds.
@Suite("portal-auth agent: tokens kept in memory while the store is unchanged", .serialized, .timeLimit(.minutes(2)))
struct AgentTokenMemoryTests {
    static let portal = "https://gis.example.com/portal"

    @Test("from memory while unchanged and valid for min_valid; the store read again past it, or once written")
    func keptInMemory() async throws {
        let store = try PreparedStore()
        try await store.write([PreparedStore.portal(Self.portal, token: "stored-token-8", accessIn: 3600)])
        let empty = try PreparedStore()
        try await empty.write([])
        let agent = try AgentCommandTests.RunningAgent(store)
        defer { agent.stop() }
        let viaAgent = AgentCommandTests.throughAgent(agent, empty: empty)
        let first = try await ToolRunner.run(["token", "--min-valid", "60"], environment: viaAgent)
        #expect(first.status == 0, "\(first)")
        #expect(first.stdout == "stored-token-8\n")

        let folder = (store.path as NSString).deletingLastPathComponent
        #expect(chmod(folder, 0o777) == 0)
        let direct = try await ToolRunner.run(
            ["token", "--min-valid", "60"], environment: store.environment.merging(["PORTAL_AUTH_AGENT": "off"]) { $1 })
        #expect(direct.status != 0, "the store cannot be read now: \(direct)")
        let kept = try await ToolRunner.run(["token", "--min-valid", "60"], environment: viaAgent)
        #expect(kept.status == 0, "answered from memory: \(kept)")
        #expect(kept.stdout == "stored-token-8\n")
        // More than the token has left: the store decides (and cannot be read).
        let longer = try await ToolRunner.run(["token", "--min-valid", "7200"], environment: viaAgent)
        #expect(longer.status == direct.status, "\(longer)")
        #expect(longer.stdout.isEmpty)

        // Another process signs in anew: the next request has the new token.
        #expect(chmod(folder, 0o700) == 0)
        try await store.write([PreparedStore.portal(Self.portal, token: "stored-token-9", accessIn: 3600)])
        let renewed = try await ToolRunner.run(["token", "--min-valid", "60"], environment: viaAgent)
        #expect(renewed.status == 0, "\(renewed)")
        #expect(renewed.stdout == "stored-token-9\n")
    }
}
