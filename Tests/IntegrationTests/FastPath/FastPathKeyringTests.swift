import Foundation
import Testing
@testable import PortalAuth

/// `token` and `refresh` on a sign-in kept in a real desktop keyring (issue 14), by the fast path and by the full
/// parser (issue 17): the same output and exit status, and neither path ever writes a token to a file.
@Suite(
    "token and refresh on a keyring sign-in: the fast path and the full parser agree", .serialized,
    .enabled(if: TestServer.isConfigured))
struct FastPathKeyringTests {
    let server: TestServer

    init() throws {
        server = try TestServer.current()
    }

    @Test("token: the same stdout, stderr and exit status on both paths, for each store choice and the default sign-in")
    func sameTokenOutput() async throws {
        let home = try KeyringScratch.onSharedKeyring()
        try await home.signIn(.portal, server: server)
        let selector = ["--portal", server.portal, "--client-id", server.clientID]
        let lines: [[String]] = [
            ["token"],
            ["token", "--format", "json"],
            ["token", "--format", "header"] + selector,
            ["token", "--store", "keyring"] + selector,
            ["token", "--store", "auto", "--format", "json"],
            ["token", "--store", "file"] + selector,
            ["token", "--iap", server.iapConfig, "--format", "json"],
            ["token", "--name", "nobody"],
        ]
        for arguments in lines {
            let fast = try await home.run(arguments, extra: ["PORTAL_AUTH_FAST_PATH": "only"])
            let full = try await home.run(arguments, extra: ["PORTAL_AUTH_FAST_PATH": "off"])
            #expect(!fast.stderr.contains("PORTAL_AUTH_FAST_PATH=only"), "the fast path refused \(arguments): \(fast)")
            #expect(fast.status == full.status, "\(arguments): fast \(fast)\nfull \(full)")
            #expect(Self.masked(fast.stdout) == Self.masked(full.stdout), "\(arguments)")
            #expect(Self.masked(fast.stderr) == Self.masked(full.stderr), "\(arguments)")
        }
        let token = try await home.run(["token"], extra: ["PORTAL_AUTH_FAST_PATH": "only"])
        #expect(token.status == 0, "\(token)")
        #expect(token.stdout == (try home.itemEntry(.portal)["access_token"]?.stringValue ?? "") + "\n")
    }

    @Test(
        "refresh --format json on both paths: the same JSON members, the new tokens in the keyring item and in no file")
    func refreshKeepsTokensInKeyring() async throws {
        let home = try KeyringScratch.onSharedKeyring()
        try await home.signIn(.portal, server: server)
        var shapes: [[String]] = []
        for mode in ["only", "off"] {
            let before = try home.itemEntry(.portal)["access_token"]?.stringValue
            let refresh = try await home.run(["refresh", "--format", "json"], extra: ["PORTAL_AUTH_FAST_PATH": mode])
            #expect(refresh.status == 0, "\(mode): \(refresh)")
            #expect(!refresh.stderr.contains("PORTAL_AUTH_FAST_PATH=only"), "the fast path refused it: \(refresh)")
            let printed = try JSONValue.parse(Data(refresh.stdout.utf8))
            shapes.append(printed.objectValue?.members.map(\.key).sorted() ?? [])
            let item = try home.itemEntry(.portal)
            let access = try #require(item["access_token"]?.stringValue)
            let refreshToken = try #require(item["refresh_token"]?.stringValue)
            #expect(access != before, "\(mode): not refreshed")
            #expect(printed["token"]?.stringValue == access, "\(mode)")
            #expect(try home.filesHolding([access, refreshToken]).isEmpty, "\(mode): a token reached a file")
            #expect(try home.indexEntry(.portal).value["access_token"] == nil, "\(mode)")
        }
        #expect(shapes.count == 2 && shapes[0] == shapes[1] && !shapes[0].isEmpty, "\(shapes)")
    }

    /// `text` with the seconds-left figures masked (they tick between runs).
    private static func masked(_ text: String) -> String {
        var text = text
        for pattern in [#"(_in": )[0-9]+"#, #"\(([0-9]+) s\)"#] {
            text = text.replacingOccurrences(of: pattern, with: "N", options: .regularExpression)
        }
        return text
    }
}
