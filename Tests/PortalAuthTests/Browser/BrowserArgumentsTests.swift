import Foundation
import Glibc
import Testing
@testable import PortalAuth
@testable import PortalAuthCore
@testable import PortalAuthTransport

/// The browser command's arguments are readable by every local user (`/proc/PID/cmdline`): neither the sign-in URL
/// (state, code challenge, nonce) nor the logout's ID token, nor an address on loopback that hands them out, may be
/// there (issue 12, items 1 and 2).
@Suite("What the browser command's arguments reveal", .serialized)
struct BrowserArgumentsTests {
    /// A browser command that records its last argument in `file` and exits.
    private static func recordingCommand(_ file: String) -> String {
        "sh -c 'printf %s \"$1\" > \(file).tmp && mv \(file).tmp \(file)' sh"
    }

    private static func scratch() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pa-args-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// Waits (off the pool, up to 20 s) for `file` to appear, and returns its text.
    private static func recorded(_ file: String) async throws -> String {
        try await BlockingWork.run {
            for _ in 0..<400 {
                if let text = try? String(contentsOfFile: file, encoding: .utf8) { return text }
                usleep(50_000)
            }
            throw TestFailure("the browser command never ran")
        }
    }

    @Test("a sign-in URL is not in the command's arguments: they hold a private page that forwards to it")
    func signInURLHidden() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("argument").path
        let url = URL(
            string:
                "https://idp.example/authorize?client_id=c&state=STATE-SECRET&code_challenge=CHALLENGE-SECRET&nonce=NONCE-SECRET"
        )!
        try CommandBrowserOpener(command: Self.recordingCommand(output)).open(url) { _ in }
        let argument = try await Self.recorded(output)
        for secret in ["STATE-SECRET", "CHALLENGE-SECRET", "NONCE-SECRET", "idp.example"] {
            #expect(!argument.contains(secret), "\(argument)")
        }
        let page = try #require(URL(string: argument))
        #expect(page.isFileURL, "\(argument)")
        var info = stat()
        #expect(lstat(page.path, &info) == 0 && info.st_mode & 0o777 == 0o600 && info.st_uid == getuid())
        #expect(lstat(page.deletingLastPathComponent().path, &info) == 0 && info.st_mode & 0o777 == 0o700)
        let html = try String(contentsOf: page, encoding: .utf8)
        #expect(html.contains("url=https://idp.example/authorize?client_id=c&amp;state=STATE-SECRET"))
        unlink(page.path)
    }

    @Test("a logout's ID token is neither in the arguments nor handed out on loopback to whoever asks first")
    func logoutHintHidden() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("argument").path
        let logout = RPInitiatedLogout(
            logoutURL: URL(string: "https://idp.example/logout")!, clientID: "c",
            redirectURL: URL(string: "http://127.0.0.1/logged-out")!, idTokenHint: "ID-TOKEN-SECRET",
            successMessage: "Signed out")
        let settings = SignInSettings(
            browser: CommandBrowserOpener(command: Self.recordingCommand(output)), timeout: .seconds(20),
            environment: SignInEnvironment(hasDisplay: true, isSSHSession: false, hasForwardedDisplay: false))
        let running = Task { try await logout.run(settings: settings) }
        defer { running.cancel() }
        let argument = try await Self.recorded(output)
        #expect(!argument.contains("ID-TOKEN-SECRET"))
        let opened = try #require(URL(string: argument))
        if !opened.isFileURL {
            // Another local process reads the arguments and fetches the address before the browser does.
            let response = try await CurlHTTPClient().send(.get(opened))
            let said = (response.headers["Location"] ?? "") + String(decoding: response.body, as: UTF8.self)
            #expect(!said.contains("ID-TOKEN-SECRET"), "the loopback address handed the ID token to another process")
        } else {
            var info = stat()
            #expect(lstat(opened.path, &info) == 0 && info.st_mode & 0o777 == 0o600)
            #expect(try String(contentsOf: opened, encoding: .utf8).contains("id_token_hint=ID-TOKEN-SECRET"))
            running.cancel()
            _ = try? await running.value
            #expect(access(opened.path, F_OK) != 0, "the page is removed when the logout ends")
        }
    }
}
