import Foundation
import Testing
import PortalAuth

/// `status` with a selection (`--url`, `--portal`, `--iap`, `--name`) shows the sign-in that counts, and says in one
/// line when none is stored for it; its JSON marks the entry that counts with `"selected": true`.
@Suite("status selection")
struct StatusSelectionTests {
    static let first = "https://gis.example.test/portal"
    static let second = "https://maps.example.test/portal"

    private func twoSignIns() async throws -> PreparedStore {
        let store = try PreparedStore()
        try await store.write([
            PreparedStore.portal(Self.first, token: "t1"), PreparedStore.portal(Self.second, token: "t2"),
        ])
        return store
    }

    @Test("--url that no sign-in covers: exit 77 and one line that says so, on text and JSON alike")
    func uncovered() async throws {
        let store = try await twoSignIns()
        let url = "https://elsewhere.example.test/data"
        let text = try await ToolRunner.run(["status", "--url", url], environment: store.environment)
        #expect(text.status == 77, "\(text)")
        #expect(text.stdout.isEmpty, "\(text)")
        #expect(text.stderrLines.count == 1, "\(text)")
        #expect(text.stderr.contains("no stored portal or IAP sign-in covers \(url)"), "\(text)")
        let json = try await ToolRunner.run(
            ["status", "--url", url, "--format", "json"], environment: store.environment)
        #expect(json.status == 77, "\(json)")
        #expect(json.stderrLines.count == 1, "\(json)")
        let value = try JSONValue.parse(Data(json.stdout.utf8))
        #expect(value["credentials"]?.arrayValue?.isEmpty == true, "\(json)")
    }

    @Test("--url and --portal show only the sign-in that counts, marked selected in the JSON")
    func filtered() async throws {
        let store = try await twoSignIns()
        for selection in [["--url", Self.second + "/sharing/rest/portals/self"], ["--portal", Self.second]] {
            let text = try await ToolRunner.run(["status"] + selection, environment: store.environment)
            #expect(text.status == 0, "\(text)")
            #expect(text.stdout.contains("Portal \(Self.second)"), "\(text)")
            #expect(!text.stdout.contains("Portal \(Self.first)"), "\(selection): \(text)")
            let json = try await ToolRunner.run(
                ["status", "--format", "json"] + selection, environment: store.environment)
            let entries = try #require(JSONValue.parse(Data(json.stdout.utf8))["credentials"]?.arrayValue)
            #expect(entries.count == 1, "\(json)")
            #expect(entries.first?["target"]?.stringValue == Self.second, "\(json)")
            #expect(entries.first?["selected"]?.boolValue == true, "\(json)")
        }
        // Without options, several and no default: all are listed, none is the one that counts.
        let all = try await ToolRunner.run(["status", "--format", "json"], environment: store.environment)
        let entries = try #require(JSONValue.parse(Data(all.stdout.utf8))["credentials"]?.arrayValue)
        #expect(entries.count == 2, "\(all)")
        #expect(entries.allSatisfy { $0["selected"]?.boolValue == false }, "\(all)")
    }
}
