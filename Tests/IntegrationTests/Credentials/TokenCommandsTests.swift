import Foundation
import Testing
@testable import PortalAuth

/// `portal-auth generate-token` and `portal-auth app-token` end to end: the token alone on stdout, secrets never
/// from argv and never printed, exit statuses.
@Suite("generate-token and app-token commands", .serialized, .enabled(if: TestServer.isConfigured))
struct TokenCommandsTests {
    @Test("generate-token --password-stdin prints only the token, which the portal accepts")
    func generateTokenPlain() async throws {
        let server = try TestServer.current()
        let password = try server.password
        let result = try await ToolRunner.run(
            [
                "generate-token", "--portal", server.portal, "--username", "alice", "--password-stdin", "--expiration",
                "10",
            ],
            stdin: Data((password + "\n").utf8))
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines.count == 1)
        let token = try #require(result.stdoutLines.first)
        #expect(try await server.portalSelf(token: token)["user"]?["username"]?.stringValue == "alice")
        #expect(result.stderr.contains("Referer: app://portal-auth"))
        #expect(
            !result.stderr.contains(token) && !result.stderr.contains(password) && !result.stdout.contains(password))
    }

    @Test("generate-token --format json gives the token, its expiry and referer; nothing on stderr")
    func generateTokenJSON() async throws {
        let server = try TestServer.current()
        let result = try await ToolRunner.run(
            [
                "generate-token", "--portal", "\(server.portal)/rest/services", "--username", "alice",
                "--password-stdin", "--format", "json",
                "--referer", "https://app.example.test",
            ],
            stdin: Data((try server.password + "\r\n").utf8))
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.isEmpty)
        let json = try JSONValue.parse(Data(result.stdout.utf8))
        let token = try #require(json["token"]?.stringValue)
        #expect(json["referer"]?.stringValue == "https://app.example.test")
        #expect(json["username"]?.stringValue == "alice")
        #expect(json["ssl_required"] == .bool(false))
        #expect(json["token_service_url"]?.stringValue == "\(server.portal)/sharing/rest/generateToken")
        #expect(
            TokenJSONShape.problems(in: json, kind: "token").isEmpty,
            "\(TokenJSONShape.problems(in: json, kind: "token"))")
        #expect(json["url"]?.stringValue == "\(server.portal)/rest/services", "a bare URL")
        let expires = try #require(json["expires_in"]?.integerValue)
        #expect(abs(expires - 3600) < 30, "the server's default: 60 minutes")
        #expect(try await server.portalSelf(token: token)["user"]?["username"]?.stringValue == "alice")
    }

    @Test(
        "generate-token refusals and missing input give their exit statuses without echoing secrets",
        arguments: [
            (["--password-stdin"], "not-alices-password\n", Int32(77), "refused the username and password of alice"),
            (["--password-stdin"], "", 64, "no password on standard input"),
            ([], "", 64, "no terminal to ask for the password"),
            (["--password", "x"], "", 64, "portal-auth: error: unknown option '--password'"),
            (["--password-stdin", "--expiration", "0"], "x\n", 64, "--expiration must be a positive number"),
        ])
    func generateTokenFailures(extra: [String], stdin: String, status: Int32, message: String) async throws {
        let server = try TestServer.current()
        let result = try await ToolRunner.run(
            ["generate-token", "--portal", server.portal, "--username", "alice"] + extra, stdin: Data(stdin.utf8))
        #expect(result.status == status, "\(result)")
        #expect(result.stderr.contains(message), "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(!result.stderr.contains("not-alices-password"))
    }

    @Test("app-token reads the secret from a file or the environment and prints a token the portal accepts")
    func appToken() async throws {
        let server = try TestServer.current()
        let secret = try server.appSecret
        let fromFile = try await ToolRunner.run(
            [
                "app-token", "--portal", server.portal, "--client-id", server.appClientID, "--client-secret-file",
                server.appSecretFile,
            ])
        #expect(fromFile.status == 0, "\(fromFile)")
        let token = try #require(fromFile.stdoutLines.first)
        #expect(fromFile.stdoutLines.count == 1)
        #expect(try await server.portalSelf(token: token)["appInfo"]?["appId"]?.stringValue == server.appClientID)
        #expect(!fromFile.stderr.contains(secret) && !fromFile.stderr.contains(token))
        #expect(!fromFile.stderr.contains("warning"), "the server's secret file is 0600")

        let fromEnvironment = try await ToolRunner.run(
            [
                "app-token", "--portal", server.portal, "--client-id", server.appClientID, "--format", "json",
                "--expiration", "15",
            ],
            environment: ["PORTAL_AUTH_CLIENT_SECRET": secret])
        #expect(fromEnvironment.status == 0, "\(fromEnvironment)")
        let json = try JSONValue.parse(Data(fromEnvironment.stdout.utf8))
        #expect(json["client_id"]?.stringValue == server.appClientID)
        #expect(
            TokenJSONShape.problems(in: json, kind: "oauth-application").isEmpty,
            "\(TokenJSONShape.problems(in: json, kind: "oauth-application"))")
        let expires = try #require(json["expires_in"]?.integerValue)
        #expect(abs(expires - 900) < 30)

        let header = try await ToolRunner.run(
            [
                "app-token", "--portal", server.portal, "--client-id", server.appClientID, "--client-secret-file",
                server.appSecretFile, "--format", "header",
            ])
        #expect(header.status == 0, "\(header)")
        let line = try #require(header.stdoutLines.first)
        #expect(line.hasPrefix("X-Esri-Authorization: Bearer "))
        let value = String(line.dropFirst("X-Esri-Authorization: ".count))
        let viaHeader = try await server.get(
            "\(server.portal)/sharing/rest/portals/self?f=json", headers: [("X-Esri-Authorization", value)])
        #expect(try JSONValue.parse(viaHeader.body)["appInfo"]?["appId"]?.stringValue == server.appClientID)

        let fromStdin = try await ToolRunner.run(
            ["app-token", "--portal", server.portal, "--client-id", server.appClientID, "--client-secret-file", "-"],
            stdin: Data((secret + "\n").utf8))
        #expect(fromStdin.status == 0, "\(fromStdin)")
    }

    @Test("app-token failures: a wrong secret, no secret, an unreadable or world-readable file")
    func appTokenFailures() async throws {
        let server = try TestServer.current()
        let scratch = try ScratchStore()
        let wrong = scratch.directory.appendingPathComponent("wrong.secret")
        try Data("wrong-secret-value\n".utf8).write(to: wrong)
        chmod(wrong.path, 0o644)

        let refused = try await ToolRunner.run(
            [
                "app-token", "--portal", server.portal, "--client-id", server.appClientID, "--client-secret-file",
                wrong.path,
            ])
        #expect(refused.status == 77, "\(refused)")
        #expect(refused.stderr.contains("refused the client ID \(server.appClientID) and its secret"))
        #expect(refused.stderr.contains("can be read by other users (mode 644)"))
        #expect(!refused.stderr.contains("wrong-secret-value"))

        let missing = try await ToolRunner.run(
            [
                "app-token", "--portal", server.portal, "--client-id", server.appClientID, "--client-secret-file",
                scratch.directory.appendingPathComponent("none").path,
            ])
        #expect(missing.status == 66, "\(missing)")
        #expect(missing.stderr.contains("no such file"))

        let none = try await ToolRunner.run(
            ["app-token", "--portal", server.portal, "--client-id", server.appClientID],
            environment: ["PORTAL_AUTH_CLIENT_SECRET": ""])
        #expect(none.status == 64, "\(none)")
        #expect(none.stderr.contains("PORTAL_AUTH_CLIENT_SECRET"))

        let argv = try await ToolRunner.run([
            "app-token", "--portal", server.portal, "--client-id", server.appClientID, "--client-secret", "s",
        ])
        #expect(argv.status == 64, "no option takes the secret on the command line")
    }
}
