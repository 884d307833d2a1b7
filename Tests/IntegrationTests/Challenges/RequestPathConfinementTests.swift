import Foundation
import Testing
import TestSupport
@testable import PortalAuth

/// `portal-auth request` must not send a portal's token to a URL outside the portal's path once the path is read
/// the way servers read it (issue 25): `…/arcgis/%2e%2e/other/collect` reaches `/other/collect` on common servers.
/// A loopback server (python3's http.server) records whether each request carried the token.
@Suite("request: the portal's token stays inside the portal's path", .serialized)
struct RequestPathConfinementTests {
    /// A loopback HTTP server that answers every request with `{}` and logs `<raw path> LEAK|CLEAN` (whether the
    /// token appeared in the request line or a header) to a file.
    final class RecordingServer {
        let process: TestServerProcess
        let port: Int
        let log: URL

        init(token: String, directory: URL) throws {
            log = directory.appendingPathComponent("requests.log")
            let script = """
                import http.server, sys
                token, log = open(sys.argv[1]).read(), sys.argv[2]
                class Handler(http.server.BaseHTTPRequestHandler):
                    def do_GET(self):
                        seen = token in self.requestline or token in str(self.headers)
                        with open(log, "a") as out:
                            out.write(self.path + (" LEAK" if seen else " CLEAN") + "\\n")
                        body = b"{}"
                        self.send_response(200)
                        self.send_header("Content-Type", "application/json")
                        self.send_header("Content-Length", str(len(body)))
                        self.end_headers()
                        self.wfile.write(body)
                    do_POST = do_GET
                    def log_message(self, *arguments):
                        pass
                server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
                print("PORT", server.server_address[1], flush=True)
                server.serve_forever()
                """
            // The token from a private file, not argv: a failed start prints the command line.
            let tokenFile = directory.appendingPathComponent("token")
            try Data(token.utf8).write(to: tokenFile, options: .atomic)
            guard chmod(tokenFile.path, 0o600) == 0 else { throw POSIXError(.EACCES) }
            // Its standard error in its log, not the test runner's: a server left running must not hold its pipe open.
            process = try TestServerProcess(
                "python3", ["-c", script, tokenFile.path, log.path], readiness: .announcedPort)
            port = try process.announcedPort()
        }

        deinit {
            // No grace after SIGTERM: the test runner's children inherit SIGTERM ignored.
            process.stop(grace: .zero)
        }

        /// The logged lines so far.
        func lines() -> [String] {
            ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
    }

    @Test(
        "encoded dot segments, encoded slashes, backslashes and path parameters never carry the portal's token out of its path",
        arguments: [
            "/arcgis/%2e%2e/other/collect", "/arcgis/%2E%2E/other/collect", "/arcgis/.%2e/other/collect",
            "/arcgis/%2e%2e%2fother/collect",
            "/arcgis/..%2fother/collect", "/arcgis/..%5cother/collect", "/arcgis/..;/other/collect",
            "/arcgis/%252e%252e/other/collect",
            "/arcgis/sharing/../../other/collect",
        ])
    func outsideThePortal(path: String) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pa-path-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("state"), withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: directory) }
        let token = "AT-\(UUID().uuidString)"
        let server = try RecordingServer(token: token, directory: directory)
        let portal = "http://127.0.0.1:\(server.port)/arcgis"
        let store = directory.appendingPathComponent("state/credentials.json").path
        try Self.writePortalEntry(portal: portal, token: token, to: store)

        // Inside the portal the token goes (so the server does see it when it is sent).
        let inside = try await ToolRunner.run([
            "request", portal + "/sharing/rest/portals/self?f=json", "--store", store,
        ])
        #expect(inside.status == 0, "\(inside)")
        let attack = try await ToolRunner.run(["request", "http://127.0.0.1:\(server.port)\(path)", "--store", store])
        #expect(!attack.stdout.contains(token) && !attack.stderr.contains(token))
        let lines = server.lines()
        #expect(lines.first?.hasSuffix(" LEAK") == true, "the token was not sent inside the portal: \(lines)")
        #expect(
            lines.count <= 2 && lines.dropFirst().allSatisfy { $0.hasSuffix(" CLEAN") }, "\(path): \(lines) \(attack)")
    }

    /// Writes a store holding one portal sign-in with `token`.
    static func writePortalEntry(portal: String, token: String, to store: String) throws {
        let entry: JSONValue = .object([
            "kind": .string("oauth-user"), "client_id": .string("c"), "portal_url": .string(portal),
            "redirect_url": .string("http://127.0.0.1/callback"),
            "token_url": .string(portal + "/sharing/rest/oauth2/token"), "access_token": .string(token),
            "access_token_expires_at": .integer(4_102_444_800), "refresh_token": .string("RT-1"),
            "refresh_token_expires_at": .integer(4_102_444_800), "username": .string("alice"),
        ])
        let document: JSONValue = .object([
            "format": .string("portal-auth-credentials"), "version": .integer(1),
            "entries": .object(
                JSONObject([
                    (key: OAuthUserCredential.storeKey(portalURL: URL(string: portal)!, clientID: "c"), value: entry)
                ])),
        ])
        _ = FileManager.default.createFile(
            atPath: store, contents: Data(document.serialized(indent: 2).utf8), attributes: [.posixPermissions: 0o600])
    }
}
