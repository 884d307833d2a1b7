import Foundation
import Glibc
import Testing
@testable import PortalAuth

/// The built tool against what a hostile local process, server or file can do (issue 12): no test server needed.
@Suite("portal-auth against local attacks and hostile input", .serialized)
struct LocalAttackCommandTests {
    /// A private scratch folder with a store path in it; removed by the caller.
    private struct Scratch {
        let directory: URL
        var store: String { directory.appendingPathComponent("state/credentials.json").path }

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("pa-local-\(UUID().uuidString)")
            try FileManager.default.createDirectory(
                at: directory.appendingPathComponent("state"), withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }

        /// Writes a store holding one portal sign-in.
        func writePortalEntry(portal: String, accessToken: String = "AT-1", username: String = "alice") throws {
            let portalURL = URL(string: portal)!
            let entry: JSONValue = .object([
                "kind": .string("oauth-user"), "client_id": .string("c"), "portal_url": .string(portal),
                "redirect_url": .string("http://127.0.0.1/callback"),
                "token_url": .string(portal + "/sharing/rest/oauth2/token"), "access_token": .string(accessToken),
                "access_token_expires_at": .integer(4_102_444_800), "refresh_token": .string("RT-1"),
                "refresh_token_expires_at": .integer(4_102_444_800), "username": .string(username),
            ])
            let document: JSONValue = .object([
                "format": .string("portal-auth-credentials"), "version": .integer(1),
                "entries": .object(
                    JSONObject([(key: OAuthUserCredential.storeKey(portalURL: portalURL, clientID: "c"), value: entry)])
                ),
            ])
            _ = FileManager.default.createFile(
                atPath: store, contents: Data(document.serialized(indent: 2).utf8),
                attributes: [.posixPermissions: 0o600])
        }
    }

    /// A loopback port that accepts connections (the kernel completes them) and never answers.
    private final class SilentServer {
        let fd: Int32
        let port: Int

        init() throws {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            self.fd = fd
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, length) == 0 && listen(fd, 64) == 0 && getsockname(fd, $0, &length) == 0
                }
            }
            port = bound ? Int(UInt16(bigEndian: address.sin_port)) : 0
            guard bound else { throw CocoaError(.featureUnsupported) }
        }

        deinit { close(fd) }
    }

    private static func hasControl(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.properties.generalCategory == .control && $0 != "\n" }
    }

    // MARK: - Time limits (item 7)

    @Test("revoke --timeout 3 against a hung revocation endpoint ends within its limit and still deletes the entry")
    func revokeHonoursTimeout() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let server = try SilentServer()
        let portal = "http://127.0.0.1:\(server.port)/portal"
        try scratch.writePortalEntry(portal: portal)
        // Without an overall limit this took 3 × 60 s: the hang guard (60 s) would end it and fail the test.
        let result = try await ToolRunner.run(
            ["revoke", "--portal", portal, "--store", scratch.store, "--timeout", "3"], timeout: .seconds(60))
        #expect(!result.timedOut, "\(result)")
        #expect(result.status == 69, "\(result)")
        #expect(result.stderr.contains("deleted anyway"), "\(result)")
        let left = try JSONValue.parse(Data(contentsOf: URL(fileURLWithPath: scratch.store)))["entries"]?.objectValue
        #expect(left?.members.isEmpty == true)
    }

    // MARK: - The browser's arguments and core dumps (items 1 and 14)

    @Test(
        "login: the browser command's arguments hold no state, challenge or identity-provider URL; the tool allows no core file",
        .enabled(if: TestServer.isConfigured))
    func browserArgumentsAndCoreLimit() async throws {
        // A portal that answers: the authorization request is checked before the browser opens (issue 28, point 5).
        let portal = try TestServer.current().portal
        let scratch = try Scratch()
        defer { scratch.remove() }
        let browser = scratch.directory.appendingPathComponent("browser.sh").path
        let out = scratch.directory.path
        try """
        #!/bin/sh
        printf '%s' "$1" > \(out)/argument
        cat /proc/$PPID/limits > \(out)/limits
        cat "${1#file://}" > \(out)/page
        """.write(toFile: browser, atomically: true, encoding: .utf8)
        chmod(browser, 0o755)
        let result = try await ToolRunner.run(
            [
                "login", "--portal", portal, "--client-id", "c", "--store", scratch.store,
                "--browser-command", browser, "--timeout", "4",
            ],
            environment: ["PORTAL_AUTH_LAUNCH_DIR": scratch.directory.appendingPathComponent("launch").path],
            timeout: .seconds(60))
        #expect(result.status == 75, "\(result)")
        let argument = try String(contentsOfFile: "\(out)/argument", encoding: .utf8)
        #expect(argument.hasPrefix("file://"), "\(argument)")
        #expect(!argument.contains("state=") && !argument.contains("code_challenge") && !argument.contains(portal))
        let page = try String(contentsOfFile: "\(out)/page", encoding: .utf8)
        #expect(page.contains("\(portal)/sharing/rest/oauth2/authorize?"), "the page forwards to the sign-in")
        #expect(page.contains("code_challenge="))
        let launch = scratch.directory.appendingPathComponent("launch").path
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: launch).isEmpty,
            "the page is removed when the sign-in ends")
        let limits = try String(contentsOfFile: "\(out)/limits", encoding: .utf8)
        let core = limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") }
        #expect(
            core?.split(separator: " ").filter { !$0.isEmpty }.dropFirst(4).prefix(2) == ["0", "0"], "\(core ?? "")")
    }

    // MARK: - Untrusted text and header injection (items 4 and 5)

    @Test("a stored token with CR LF is never printed as a second header line")
    func headerInjection() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        try scratch.writePortalEntry(portal: "https://portal.example/portal", accessToken: "AT-1\r\nX-Injected: yes")
        let result = try await ToolRunner.run(
            [
                "token", "--portal", "https://portal.example/portal", "--client-id", "c", "--store", scratch.store,
                "--format", "header",
            ])
        #expect(result.status != 0, "\(result)")
        #expect(!result.stdout.contains("X-Injected"), "\(result)")
    }

    @Test("status shows a stored user name without control characters")
    func statusUserName() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        try scratch.writePortalEntry(
            portal: "https://portal.example/portal", username: "ali\u{1B}]0;owned\u{07}\u{1B}[2Jce")
        let result = try await ToolRunner.run(["status", "--store", scratch.store])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("ali"))
        #expect(!Self.hasControl(result.stdout) && !Self.hasControl(result.stderr), "\(result.stdout.debugDescription)")
    }

    @Test("iap check shows key names and values without control characters, and warns loudly about * (item 15)")
    func iapCheck() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let file = scratch.directory.appendingPathComponent("iap.json").path
        try #"""
        {"authorize_url": "https://idp.example/a", "token_url": "https://idp.example/t", "logout_url": "https://idp.example/l",
         "client_id": "abc\u001b]0;owned\u0007", "redirect_url": "http://127.0.0.1/cb", "scope": ["openid\u001b[2J"],
         "hosts_behind_proxy": ["*"], "odd\u001b[31mkey": 1}
        """#.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try await ToolRunner.run(["iap", "check", "--config", file])
        #expect(result.status == 0, "\(result)")
        #expect(
            !Self.hasControl(result.stdout) && !Self.hasControl(result.stderr),
            "\(result.stdout.debugDescription) \(result.stderr.debugDescription)")
        #expect(result.stderr.contains("warning: `hosts_behind_proxy[0]` \"*\" matches every host"), "\(result.stderr)")
        #expect(result.stdout.contains("abc"))
    }
}
