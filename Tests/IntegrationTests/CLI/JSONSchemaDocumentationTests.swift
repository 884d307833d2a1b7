import Foundation
import Testing
import TestSupport
import PortalAuth

/// The JSON documents of `status`, `sign-out`, `iap check` and `request`, field by field against their tables in
/// CommandLineTool.md: every documented field appears in a real output, and nothing undocumented does.
@Suite("JSON schema documentation")
struct JSONSchemaDocumentationTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The field table after "`COMMAND --format json` prints one document (`schema_version` 1)": its field paths.
    static func documentedFields(of command: String) throws -> Set<String> {
        let text = try String(
            contentsOf: root.appendingPathComponent("Sources/PortalAuth/PortalAuth.docc/CommandLineTool.md"),
            encoding: .utf8)
        let lines = text.components(separatedBy: "\n")
        let start = try #require(
            lines.firstIndex { $0.hasPrefix("`\(command) --format json` prints one document (`schema_version` 1)") },
            "no field table for \(command)")
        var fields: Set<String> = []
        var inTable = false
        for line in lines[(start + 1)...] {
            if line.hasPrefix("|") {
                inTable = true
                let cell = line.split(separator: "|", omittingEmptySubsequences: false)[1]
                    .trimmingCharacters(in: .whitespaces)
                if cell.hasPrefix("`"), cell.hasSuffix("`") { fields.insert(String(cell.dropFirst().dropLast())) }
            } else if inTable {
                break
            }
        }
        return fields
    }

    /// The field paths of `value`: `a`, `a.b`, `a[].b`; `opaque` paths are not looked into (a server's body).
    static func fields(of value: JSONValue, prefix: String = "", opaque: Set<String> = ["body"]) -> Set<String> {
        var found: Set<String> = []
        if let object = value.objectValue {
            for key in object.keys {
                guard let member = object[key] else { continue }
                let path = prefix.isEmpty ? key : "\(prefix).\(key)"
                found.insert(path)
                if !opaque.contains(path) { found.formUnion(fields(of: member, prefix: path, opaque: opaque)) }
            }
        } else if let array = value.arrayValue {
            for element in array where element.objectValue != nil {
                found.formUnion(fields(of: element, prefix: prefix + "[]", opaque: opaque))
            }
        }
        return found
    }

    private static func parsed(_ result: ToolRunner.Result) throws -> JSONValue {
        try JSONValue.parse(Data(result.stdout.utf8))
    }

    private func check(_ command: String, _ outputs: [JSONValue]) throws {
        let documented = try Self.documentedFields(of: command)
        let seen = outputs.reduce(into: Set<String>()) { $0.formUnion(Self.fields(of: $1)) }
        #expect(documented.subtracting(seen).isEmpty, "\(command): documented but never printed")
        #expect(seen.subtracting(documented).isEmpty, "\(command): printed but not documented")
        for output in outputs {
            #expect(output["schema_version"]?.integerValue == 1, "\(command): \(output)")
        }
    }

    /// An unsigned JWT with the claims `status --claims` decodes (never sent anywhere).
    static func jwt(_ claims: String) -> String {
        func part(_ text: String) -> String {
            Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        return part(#"{"alg":"RS256","typ":"JWT"}"#) + "." + part(claims) + ".c2lnbmF0dXJl"
    }

    @Test("status --format json: its field table, with and without --claims, a portal and an IAP sign-in")
    func status() async throws {
        let store = try PreparedStore()
        let file = store.directory.appendingPathComponent("contoso-iap.json")
        try FileManager.default.copyItem(at: SignInSelectionCommandTests.fixture("iap/entra.json"), to: file)
        let claims = #"{"iss":"https://idp.example.test","aud":"api","sub":"s","scp":"read","exp":4102444800}"#
        var iap = try PreparedStore.iap(file: file.path, token: Self.jwt(claims))
        iap.entry["id_token"] = .string(Self.jwt(claims))
        iap.entry["id_token_expires_at"] = iap.entry["access_token_expires_at"]
        try await store.write([PreparedStore.portal("https://gis.example.test/portal", token: "t"), iap])
        var outputs: [JSONValue] = []
        for extra in [[], ["--claims"]] {
            let result = try await ToolRunner.run(
                ["status", "--format", "json"] + extra, environment: store.environment)
            outputs.append(try Self.parsed(result))
        }
        try check("status", outputs)
    }

    @Test("sign-out --format json: its field table")
    func signOut() async throws {
        let store = try PreparedStore()
        try await store.write([PreparedStore.portal("http://127.0.0.1:9/portal", token: "t")])
        let result = try await ToolRunner.run(
            ["sign-out", "--format", "json"], environment: store.environment)
        try check("sign-out", [try Self.parsed(result)])
    }

    @Test("iap check --format json: its field table, for a valid file with --url and an invalid one with a warning")
    func iapCheck() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pa-schema-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let invalid = directory.appendingPathComponent("invalid.json")
        try Data(#"{"authorize_url": "http://x", "client_id": 5, "authorisation_prompt_type": ""}"#.utf8).write(
            to: invalid)
        let valid = SignInSelectionCommandTests.fixture("iap/entra.json").path
        let good = try await ToolRunner.run([
            "iap", "check", "--config", valid, "--url", "https://maps.contoso.com/", "--format", "json",
        ])
        let bad = try await ToolRunner.run(["iap", "check", "--config", invalid.path, "--format", "json"])
        try check("iap check", [try Self.parsed(good), try Self.parsed(bad)])
    }

    @Test("request --format json: its field table, for a JSON body and a binary one")
    func request() async throws {
        let server = try await BlockingWork.run { try ReplyServer() }
        defer { server.stop() }
        let store = try PreparedStore()
        var outputs: [JSONValue] = []
        for path in ["/json", "/reply?type=application/octet-stream&body_hex=fffe00"] {
            let result = try await ToolRunner.run(
                ["request", server.url(path), "--format", "json"], environment: store.environment)
            outputs.append(try Self.parsed(result))
        }
        try check("request", outputs)
    }
}
