import Foundation
import Glibc
import Testing
@testable import PortalAuth

/// `portal-auth login` and `portal-auth iap login` against the bundled authorization server, through headless
/// Chromium driven over the real login and consent pages. Serialized: each test runs a browser.
@Suite("Browser sign-in end to end", .serialized, .enabled(if: TestServer.isConfigured))
struct SignInTests {
    // MARK: - Happy paths

    @Test("portal login stores a token that the portal accepts, and status never shows it")
    func portalLogin() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        let result = try await ToolRunner.run(
            [
                "login", "--portal", server.portal, "--client-id", server.clientID, "--browser-command", server.browser,
                "--timeout", "90",
            ],
            environment: ["PORTAL_AUTH_STORE": store.path], timeout: .seconds(120))
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.contains("Signed in to \(server.portal) as alice"))
        #expect(
            result.stderr.contains("redirect_uri=http%3A%2F%2F127.0.0.1%3A"),
            "the ephemeral port goes into redirect_uri")

        let entries = try store.entries()
        let entry = try #require(entries["oauth-user|\(server.portal)|\(server.clientID)"])
        let token = try #require(entry["access_token"]?.stringValue)
        #expect(entry["refresh_token"]?.stringValue?.isEmpty == false)
        var info = stat()
        #expect(stat(store.path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(stat(store.directory.appendingPathComponent("state").path, &info) == 0 && info.st_mode & 0o777 == 0o700)

        let accepted = try await server.get(
            "\(server.portal)/sharing/rest/portals/self?f=json", headers: [("X-Esri-Authorization", "Bearer \(token)")])
        #expect(try JSONValue.parse(accepted.body)["user"]?["username"]?.stringValue == "alice")
        let refused = try await server.get(
            "\(server.portal)/sharing/rest/portals/self?f=json",
            headers: [("X-Esri-Authorization", "Bearer wrong\(token)")])
        #expect(try JSONValue.parse(refused.body)["error"]?["code"]?.integerValue == 498)

        for format in ["text", "json"] {
            let status = try await ToolRunner.run(
                ["status", "--format", format], environment: ["PORTAL_AUTH_STORE": store.path])
            #expect(status.status == 0)
            #expect(status.stdout.contains("alice") && status.stdout.contains(server.portal))
            #expect(!status.stdout.contains(token) && !status.stderr.contains(token), "status must never print a token")
        }
        #expect(!result.stderr.contains(token) && !result.stdout.contains(token))
    }

    @Test("IAP login checks the ID token and stores an access token the protected host accepts")
    func iapLogin() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        let result = try await ToolRunner.run(
            ["iap", "login", "--config", server.iapConfig, "--browser-command", server.browser, "--timeout", "90"],
            environment: ["PORTAL_AUTH_STORE": store.path], timeout: .seconds(120))
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.contains("scope=openid"))
        #expect(result.stderr.contains("nonce="))

        let entry = try #require(store.entries().values.first)
        #expect(entry["kind"]?.stringValue == "iap")
        #expect(entry["username"]?.stringValue == "alice")
        let idToken = try IDToken(compact: try #require(entry["id_token"]?.stringValue))
        #expect(idToken.issuer == server.issuer)
        #expect(idToken.audiences.contains(server.clientID))
        let token = try #require(entry["access_token"]?.stringValue)

        let protected = try await server.get(
            server.iapURL, headers: [("Authorization", "Bearer \(token)"), ("Accept", "application/json")])
        #expect(protected.statusCode == 200)
        let anonymous = try await server.get(server.iapURL, headers: [("Accept", "application/json")])
        #expect(anonymous.statusCode == 401)
    }

    // MARK: - Refusals and listener behaviour

    @Test("a denied consent ends the sign-in with access_denied, exit 77, nothing stored")
    func deniedConsent() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        let result = try await ToolRunner.run(
            [
                "login", "--portal", server.portal, "--client-id", server.clientID, "--browser-command", server.browser,
                "--timeout", "90",
            ],
            environment: ["PORTAL_AUTH_STORE": store.path, "PORTAL_AUTH_TEST_BROWSER_ACTION": "deny"],
            timeout: .seconds(120))
        #expect(result.status == 77, "\(result)")
        #expect(result.stderr.contains("access_denied"))
        // What to do next, with the command ready to paste (issue 28, point 8).
        #expect(result.stderr.contains("It was cancelled or refused in the browser; nothing was stored."), "\(result)")
        #expect(
            result.stderr.contains(
                "To try again:\n    portal-auth login --portal \(server.portal) --client-id \(server.clientID)"),
            "\(result)")
        #expect(try !FileManager.default.fileExists(atPath: store.path) || store.entries().isEmpty)
    }

    @Test("a favicon request gets 404 and a wrong-state callback 400; the real sign-in still completes")
    func strayRequests() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        let log = store.directory.appendingPathComponent("stray.log").path
        let wrapper = URL(fileURLWithPath: server.browser).deletingLastPathComponent().appendingPathComponent(
            "stray-requests-then-browse"
        ).path
        let result = try await ToolRunner.run(
            [
                "login", "--portal", server.portal, "--client-id", server.clientID, "--browser-command", wrapper,
                "--timeout", "90",
            ],
            environment: ["PORTAL_AUTH_STORE": store.path, "PORTAL_AUTH_TEST_STRAY_LOG": log], timeout: .seconds(120))
        #expect(result.status == 0, "\(result)")
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(lines.first == "favicon 404")
        #expect(lines.dropFirst().first?.hasPrefix("wrong-state 400 ") == true, "\(lines)")
        #expect(try store.entries().count == 1)
    }

    @Test("a corrupted store: status refuses it (65); login keeps it aside under a new name, says so, and signs in")
    func corruptedStore() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        try FileManager.default.createDirectory(
            atPath: (store.path as NSString).deletingLastPathComponent, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        let garbage = Data("{\"format\": \"portal-auth-credentials\", \"version\": 1, \"entries\": {\"x\": ".utf8)
        _ = FileManager.default.createFile(
            atPath: store.path, contents: garbage, attributes: [.posixPermissions: 0o600])

        let status = try await ToolRunner.run(["status"], environment: ["PORTAL_AUTH_STORE": store.path])
        #expect(status.status == 65, "\(status)")
        #expect(status.stderr.contains(store.path))
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: store.path)) == garbage,
            "a read-only command never changes the file")

        let result = try await ToolRunner.run(
            [
                "login", "--portal", server.portal, "--client-id", server.clientID, "--browser-command", server.browser,
                "--timeout", "90",
            ],
            environment: ["PORTAL_AUTH_STORE": store.path], timeout: .seconds(120))
        #expect(result.status == 0, "\(result)")
        let folder = (store.path as NSString).deletingLastPathComponent
        let kept = try FileManager.default.contentsOfDirectory(atPath: folder).filter {
            $0.hasPrefix("credentials.json.corrupt-")
        }
        #expect(kept.count == 1)
        #expect(try kept.first.map { try Data(contentsOf: URL(fileURLWithPath: "\(folder)/\($0)")) } == garbage)
        #expect(kept.first.map { result.stderr.contains($0) } == true, "the warning names the kept copy")
        #expect(try store.entries().count == 1)
    }

    @Test("a busy fixed port fails at once, naming the port, exit 64")
    func busyPort() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        let (socket, port) = try Self.occupyLoopbackPort()
        defer { close(socket) }
        // With --timeout 60 and the runner's 30 s limit, only failing at once gives exit 64.
        let result = try await ToolRunner.run(
            [
                "login", "--portal", server.portal, "--client-id", server.clientID, "--redirect-url",
                "http://127.0.0.1:\(port)/callback",
                "--browser-command", "true", "--timeout", "60",
            ],
            environment: ["PORTAL_AUTH_STORE": store.path], timeout: .seconds(30))
        #expect(result.status == 64, "\(result)")
        #expect(result.stderr.contains("\(port)"))
    }

    @Test("no redirect within --timeout: exit 75 with advice")
    func timeout() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        let result = try await ToolRunner.run(
            [
                "login", "--portal", server.portal, "--client-id", server.clientID, "--browser-command", "true",
                "--timeout", "2",
            ],
            environment: ["PORTAL_AUTH_STORE": store.path], timeout: .seconds(30))
        #expect(result.status == 75, "\(result)")
        #expect(result.stderr.contains("within 2 s"))
        #expect(result.stderr.contains("--timeout"))
    }

    @Test("a browser command that fails is not fatal: the URL is printed and the sign-in waits")
    func failingBrowser() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        let result = try await ToolRunner.run(
            [
                "login", "--portal", server.portal, "--client-id", server.clientID, "--browser-command",
                "/nonexistent/browser", "--timeout", "2",
            ],
            environment: ["PORTAL_AUTH_STORE": store.path], timeout: .seconds(30))
        #expect(result.status == 75, "\(result)")
        #expect(result.stderr.contains("/nonexistent/browser"))
        #expect(result.stderr.contains("\(server.portal)/sharing/rest/oauth2/authorize?client_id="))
    }

    @Test("Ctrl-C ends the wait at once with exit 130 and frees the port")
    func interrupt() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        let tool = try BackgroundTool.start(
            [
                "login", "--portal", server.portal, "--client-id", server.clientID, "--browser-command", "true",
                "--timeout", "60",
            ],
            environment: ["PORTAL_AUTH_STORE": store.path])
        let process = tool.process
        let text = tool.stderr(until: "Waiting for the redirect on")
        let port = try #require(Self.port(in: text), "no listening port in: \(text)")
        process.interrupt()
        process.waitUntilExit()
        #expect(process.terminationStatus == 130)  // Not 75: the interrupt, not the 60 s timeout, ended it.
        // The port is free again: it can be bound at once.
        let (socket, _) = try Self.occupyLoopbackPort(port)
        close(socket)
    }

    // MARK: - Helpers

    /// Binds and listens on 127.0.0.1 (port 0: any), returning the socket and its port.
    static func occupyLoopbackPort(_ port: UInt16 = 0) throws -> (Int32, UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0, listen(fd, 1) == 0 else {
            close(fd)
            struct BindFailed: Error {}
            throw BindFailed()
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    /// The port in "Waiting for the redirect on http://127.0.0.1:PORT/…".
    static func port(in text: String) -> UInt16? {
        guard let range = text.range(of: "Waiting for the redirect on http://127.0.0.1:") else { return nil }
        return UInt16(text[range.upperBound...].prefix { $0.isNumber })
    }
}
