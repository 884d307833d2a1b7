import Foundation
import Glibc
import Testing
import TestSupport
import PortalAuth

/// The exit-status table of CommandLineTool.md ("By command"), checked row by row against the built tool: each row
/// names a command and a case, and the case is run here. A row without a case here, or a case without its row,
/// fails, so the table and the tool cannot drift apart.
@Suite("exit status table", .serialized)
struct ExitStatusTableTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// One row of the table: the command (without backticks), the case, and the documented status.
    struct Row: Hashable, CustomStringConvertible {
        let command: String
        let situation: String
        let status: Int32
        var key: String { "\(command) | \(situation)" }
        var description: String { "\(key) → \(status)" }
    }

    /// The rows of the table that follows the `| command | case | exit |` header in CommandLineTool.md.
    static func documentedRows() throws -> [Row] {
        let file = root.appendingPathComponent("Sources/PortalAuth/PortalAuth.docc/CommandLineTool.md")
        let lines = try String(contentsOf: file, encoding: .utf8).components(separatedBy: "\n")
        guard let header = lines.firstIndex(of: "| command | case | exit |") else { return [] }
        var rows: [Row] = []
        for line in lines[(header + 2)...] {
            guard line.hasPrefix("|") else { break }
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 3, let status = Int32(cells[2]) else {
                Issue.record("a row of the exit-status table that is not `| command | case | exit |`: \(line)")
                continue
            }
            rows.append(
                Row(command: cells[0].replacingOccurrences(of: "`", with: ""), situation: cells[1], status: status))
        }
        return rows
    }

    /// What each row's case runs: the tool's exit status for it.
    typealias Case = @Sendable (Fixture) async throws -> ToolRunner.Result

    /// The stores, files and server the cases share.
    final class Fixture: Sendable {
        let empty: PreparedStore
        let signedIn: PreparedStore
        let server: ReplyServer
        let directory: URL

        init() async throws {
            empty = try PreparedStore()
            try await empty.write([])
            signedIn = try PreparedStore()
            try await signedIn.write([
                PreparedStore.portal("https://gis.example.test/portal", token: "t", accessIn: 3600)
            ])
            server = try await BlockingWork.run { try ReplyServer() }
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("pa-exit-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Data("{\"authorize_url\": ".utf8).write(to: directory.appendingPathComponent("invalid.json"))
        }

        deinit {
            server.stop()
            try? FileManager.default.removeItem(at: directory)
        }

        var entra: String { ExitStatusTableTests.root.appendingPathComponent("Fixtures/iap/entra.json").path }

        /// `request` with nothing stored.
        func request(_ path: String, _ extra: [String] = []) async throws -> ToolRunner.Result {
            try await ToolRunner.run(["request", server.url(path)] + extra, environment: empty.environment)
        }
    }

    static let cases: [String: Case] = [
        "status | a usable sign-in is stored": {
            try await ToolRunner.run(["status", "--quiet"], environment: $0.signedIn.environment)
        },
        "status | nothing is stored": {
            try await ToolRunner.run(["status", "--quiet"], environment: $0.empty.environment)
        },
        "status | an unknown option": {
            try await ToolRunner.run(["status", "--no-such-option"], environment: $0.empty.environment)
        },
        "token | nothing is stored": { try await ToolRunner.run(["token"], environment: $0.empty.environment) },
        "exec | nothing is stored": {
            try await ToolRunner.run(["exec", "--", "true"], environment: $0.empty.environment)
        },
        "exec | the command is not found": {
            try await ToolRunner.run(
                ["exec", "--", "portal-auth-no-such-command"], environment: $0.signedIn.environment)
        },
        "iap check --url U | U is covered": {
            try await ToolRunner.run(["iap", "check", "--config", $0.entra, "--url", "https://maps.contoso.com/portal"])
        },
        "iap check --url U | U is not covered": {
            try await ToolRunner.run(["iap", "check", "--config", $0.entra, "--url", "https://example.org/"])
        },
        "iap check | the file is invalid": {
            try await ToolRunner.run([
                "iap", "check", "--config", $0.directory.appendingPathComponent("invalid.json").path,
            ])
        },
        "iap check | the file is missing": {
            try await ToolRunner.run([
                "iap", "check", "--config", $0.directory.appendingPathComponent("missing.json").path,
            ])
        },
        "iap check | another user can write the file": {
            let file = $0.directory.appendingPathComponent("shared.json")
            try Data(contentsOf: URL(fileURLWithPath: $0.entra)).write(to: file)
            chmod(file.path, 0o666)
            return try await ToolRunner.run(["iap", "check", "--config", file.path])
        },
        "request | HTTP 200": { try await $0.request("/json") },
        "request | HTTP 404": { try await $0.request("/status/404") },
        "request --fail | HTTP 404": { try await $0.request("/status/404", ["--fail"]) },
        "request --fail | HTTP 200": { try await $0.request("/json", ["--fail"]) },
        "request --fail | HTTP 200 with an ArcGIS error envelope": {
            try await $0.request(ExitStatusTableTests.envelope, ["--fail"])
        },
        "request | HTTP 200 with an ArcGIS error envelope": { try await $0.request(ExitStatusTableTests.envelope) },
        "request | HTTP 401, nothing stored": { try await $0.request("/status/401") },
        "request | HTTP 403, nothing stored": { try await $0.request("/status/403") },
        "request | a redirect to a sign-in page that names the URL to return to": { fixture in
            let back = Data(fixture.server.url("/redirect").utf8).base64EncodedString()
            let portal = fixture.server.url("/portal/?url=\(back)")
            return try await fixture.request(
                "/redirect?to=\(portal.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")")
        },
        "request | the server is unreachable": {
            try await ToolRunner.run(["request", "http://127.0.0.1:1/"], environment: $0.empty.environment)
        },
    ]

    @Test("every row of the table has its case here, and every case its row")
    func tableAndCasesAgree() throws {
        let documented = Set(try Self.documentedRows().map(\.key))
        #expect(!documented.isEmpty, "the table was not found in CommandLineTool.md")
        #expect(documented.subtracting(Self.cases.keys).sorted() == [], "rows without a case in ExitStatusTableTests")
        #expect(
            Set(Self.cases.keys).subtracting(documented).sorted() == [], "cases without a row in CommandLineTool.md")
    }

    @Test("each row: the built tool exits with the documented status")
    func eachRow() async throws {
        let fixture = try await Fixture()
        for row in try Self.documentedRows() {
            guard let run = Self.cases[row.key] else { continue }  // reported by tableAndCasesAgree
            let result = try await run(fixture)
            #expect(!result.timedOut, "\(row): \(result)")
            #expect(result.status == row.status, "\(row): \(result)")
        }
    }

    @Test(
        "request: a 401 nothing answers prints no body and names the IAP sign-in; under --format json the command is its own field"
    )
    func unanswered401() async throws {
        let fixture = try await Fixture()
        let text = try await fixture.request("/status/401")
        #expect(text.status == 77, "\(text)")
        #expect(text.stdout.isEmpty)
        #expect(text.stderr.contains("HTTP 401 from"), "\(text)")
        // Whole sentences (issue 45): the placeholder is explained before the command, not after the reason.
        #expect(
            text.stderr.contains(
                "and nothing stored answers it. If this host is behind an Identity-Aware Proxy, sign in with the "
                    + "proxy's IAP configuration file as FILE:\n    portal-auth iap login --config FILE\n"
                    + "or sign in and make the request at once with:\n    portal-auth request "), "\(text)")
        #expect(!text.stderr.contains("(FILE:") && !text.stderr.contains("print the token"), "\(text)")
        #expect(text.stderr.contains("portal-auth iap login --config FILE"), "\(text)")

        let json = try await fixture.request("/status/401", ["--format", "json"])
        #expect(json.status == 77)
        let error = try #require(try JSONValue.parse(Data(json.stdout.utf8))["error"]?.objectValue, "\(json)")
        #expect(
            error["command"]?["argv"]
                == .array(["portal-auth", "iap", "login", "--config", "FILE"].map(JSONValue.string)))
        #expect(error["command"]?["shell"]?.stringValue == "portal-auth iap login --config FILE")
        let alternative = (error["alternative_command"]?["argv"]?.arrayValue ?? []).compactMap { $0.stringValue }
        #expect(
            alternative.suffix(2) == ["FILE", "--interactive"] && alternative.first == "portal-auth"
                && alternative.contains("request"))
    }

    @Test("request --fail: no body on stdout with --format body; the response object with --format json; exit 22 both")
    func failOption() async throws {
        let fixture = try await Fixture()
        let body = try await fixture.request("/status/404", ["--fail"])
        #expect(body.status == 22, "\(body)")
        #expect(body.stdout.isEmpty)
        #expect(body.stderr.contains("HTTP 404"), "\(body)")
        let json = try await fixture.request("/status/404", ["--fail", "--format", "json"])
        #expect(json.status == 22, "\(json)")
        #expect(try JSONValue.parse(Data(json.stdout.utf8))["status"]?.integerValue == 404, "\(json)")
        let without = try await fixture.request("/status/404")
        #expect(without.status == 0)
        #expect(without.stdout.contains("404"), "the body is printed without --fail: \(without)")
    }

    /// HTTP 200 with `{"error": {"code": 400, …}}`: how ArcGIS REST services report a failure.
    static let envelope =
        "/reply?status=200&body=%7B%22error%22%3A%7B%22code%22%3A400%2C%22message%22%3A%22Invalid%20query%22%7D%7D"

    @Test("request --fail: an ArcGIS error envelope in an HTTP 200 exits 22 and names the ArcGIS error")
    func failOnEnvelope() async throws {
        let fixture = try await Fixture()
        let body = try await fixture.request(Self.envelope, ["--fail"])
        #expect(body.status == 22, "\(body)")
        #expect(body.stdout.isEmpty, "\(body)")
        #expect(body.stderr.contains("ArcGIS error 400"), "\(body)")
        let json = try await fixture.request(Self.envelope, ["--fail", "--format", "json"])
        #expect(json.status == 22, "\(json)")
        #expect(try JSONValue.parse(Data(json.stdout.utf8))["status"]?.integerValue == 200, "\(json)")
    }

    @Test("a suggested command with a quoted word comes back as the same argv")
    func quotedCommandField() async throws {
        let fixture = try await Fixture()
        let awkward = fixture.directory.appendingPathComponent("it's a store.json").path
        let result = try await ToolRunner.run(
            ["token", "--iap", fixture.entra, "--store", awkward, "--format", "json"],
            environment: fixture.empty.environment)
        #expect(result.status == 77, "\(result)")
        let error = try #require(try JSONValue.parse(Data(result.stdout.utf8))["error"]?.objectValue, "\(result)")
        let argv = (error["command"]?["argv"]?.arrayValue ?? []).compactMap { $0.stringValue }
        #expect(argv.contains(awkward), "\(argv)")
        #expect(argv.contains(fixture.entra), "\(argv)")
        #expect(error["command"]?["shell"]?.stringValue.map { result.stderr.contains($0) } == true, "\(result)")
    }
}

/// `Tests/Fakes/fault_server.py` on 127.0.0.1 with an ephemeral port: any status (`/status/CODE`), redirects
/// (`/redirect?to=URL`), JSON (`/json`).
final class ReplyServer: Sendable {
    private let server: TestServerProcess
    private let base: String

    init() throws {
        server = try TestServerProcess.fake("fault_server.py", ["--lifetime", "300"])
        base = try server.announcedBase()
    }

    /// `http://127.0.0.1:PORT` + `pathAndQuery`.
    func url(_ pathAndQuery: String) -> String { base + pathAndQuery }

    func stop() { server.stop() }
}
