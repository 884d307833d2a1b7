import Foundation
import Testing
import PortalAuth

/// `status` as a check for scripts: its exit status says whether a token can be had without a new sign-in, and a
/// refresh token the identity provider refused is never shown as valid.
@Suite("status exit codes")
struct StatusExitCodeTests {
    static let portal = "https://gis.example.test/portal"

    @Test(
        "0 when usable, 77 when nothing usable is stored; --quiet prints nothing",
        arguments: [
            (
                "valid access token",
                Optional(PreparedStore.portal(portal, token: "t", accessIn: 3600, refreshIn: 86_400)), Int32(0)
            ),
            (
                "expired access token, valid refresh token",
                PreparedStore.portal(portal, token: "t", accessIn: -60, refreshIn: 86_400), 0
            ),
            ("both expired", PreparedStore.portal(portal, token: "t", accessIn: -60, refreshIn: -1), 77),
            (
                "no refresh token, access token expired",
                PreparedStore.portal(portal, token: "t", accessIn: -60, refreshIn: nil), 77
            ),
            (
                "refresh token refused",
                PreparedStore.portal(portal, token: "t", accessIn: -60, refreshIn: 86_400, refused: "invalid_grant"), 77
            ),
            ("nothing stored", nil, 77),
        ])
    func exitCodes(label: String, entry: (key: String, entry: JSONObject)?, expected: Int32) async throws {
        let store = try PreparedStore()
        try await store.write(entry.map { [$0] } ?? [])
        let quiet = try await ToolRunner.run(["status", "--quiet"], environment: store.environment)
        #expect(quiet.status == expected, "\(label): \(quiet)")
        #expect(quiet.stdout.isEmpty && quiet.stderr.isEmpty, "\(label): \(quiet)")
        let text = try await ToolRunner.run(["status"], environment: store.environment)
        #expect(text.status == expected, "\(label): \(text)")
        let selected = try await ToolRunner.run(
            ["status", "--quiet", "--portal", "https://other.example.test/portal"], environment: store.environment)
        #expect(selected.status == 77, "nothing stored for the portal asked for: \(selected)")
    }

    @Test("a refused refresh token is shown as refused, not as valid until its expiry")
    func refusedShown() async throws {
        let store = try PreparedStore()
        try await store.write([
            PreparedStore.portal(
                Self.portal, token: "t", accessIn: -60, refreshIn: 86_400 * 10, refused: "invalid_grant")
        ])
        let text = try await ToolRunner.run(["status"], environment: store.environment)
        let line = try #require(text.stdoutLines.first { $0.contains("refresh token:") })
        #expect(line.contains("refused by the identity provider at the last refresh (invalid_grant)"), "\(text)")
        #expect(!line.contains("valid until"))
        let json = try JSONValue.parse(
            Data(try await ToolRunner.run(["status", "--format", "json"], environment: store.environment).stdout.utf8))
        #expect(json["credentials"]?.arrayValue?.first?["usable"]?.boolValue == false)
        #expect(json["credentials"]?.arrayValue?.first?["refresh_token_refused"]?.stringValue == "invalid_grant")
    }

    @Test("durations read as days past 48 hours")
    func days() async throws {
        let store = try PreparedStore()
        try await store.write([
            PreparedStore.portal(Self.portal, token: "t", accessIn: 3600, refreshIn: 13 * 86_400 + 4 * 3600 + 600)
        ])
        let text = try await ToolRunner.run(["status"], environment: store.environment)
        let line = try #require(text.stdoutLines.first { $0.contains("refresh token:") })
        #expect(line.hasSuffix("(in 13 d 4 h)"), "\(line)")
        let access = try #require(text.stdoutLines.first { $0.contains("access token:") })
        #expect(access.contains("(in 59 min)") || access.contains("(in 1 h 0 min)"), "\(access)")
    }
}
