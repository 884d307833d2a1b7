import Foundation
import Testing
@testable import PortalAuth

/// `--no-browser` on a terminal: the URL is printed with a paste prompt on a line of its own (no countdown is
/// redrawn over what is typed), and the address the browser ends on (on another machine) can be pasted back. Runs the tool under `script(1)` for a real
/// pseudo-terminal.
@Suite("Pasted redirect URL on a terminal", .serialized, .enabled(if: TestServer.isConfigured))
struct PastedRedirectTests {
    /// Runs `portal-auth login --no-browser` on a pseudo-terminal, pastes what `paste` makes of the
    /// printed authorization URL, and returns the exit status and everything the terminal showed.
    private func run(paste: @escaping @Sendable (_ redirectBase: String, _ state: String) -> [String]) async throws -> (
        Int32, String
    ) {
        let server = try TestServer.current()
        let store = try ScratchStore()
        let command = [
            BinaryLocator.toolPath, "login", "--portal", server.portal, "--client-id", server.clientID,
            "--no-browser", "--timeout", "30",
        ].map { "'\($0)'" }.joined(separator: " ")
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qfec", command, "/dev/null"]
        process.environment = ProcessInfo.processInfo.environment.merging([
            "PORTAL_AUTH_STORE": store.path, "TERM": "dumb",
        ]) { $1 }
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()

        var text = readOutput(of: output, until: "Paste that address here and press Enter:")
        let url = try #require(
            text.split(whereSeparator: \.isWhitespace).first {
                $0.hasPrefix("\(server.portal)/sharing/rest/oauth2/authorize?")
            },
            "no authorization URL in: \(text)")
        let items = URLComponents(string: String(url))?.queryItems ?? []
        let redirect = try #require(items.first { $0.name == "redirect_uri" }?.value)
        let state = try #require(items.first { $0.name == "state" }?.value)
        for line in paste(redirect, state) {
            input.fileHandleForWriting.write(Data((line + "\n").utf8))
            try await Task.sleep(for: .milliseconds(300))
        }
        process.waitUntilExit()
        text += String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (process.terminationStatus, text)
    }

    @Test(
        "a pasted error redirect ends the sign-in with the identity provider's error; a wrong paste is explained first")
    func pastedError() async throws {
        let (status, text) = try await run { redirect, state in
            [
                "not a url", "\(redirect)?code=x&state=someone-elses",
                "\(redirect)?error=access_denied&error_description=Denied+on+the+other+machine&state=\(state)",
            ]
        }
        #expect(status == 77, "\(text)")
        #expect(text.contains("paste the address the browser shows") || text.contains("paste the whole address"))
        #expect(text.contains("belongs to another sign-in"))
        #expect(text.contains("access_denied"))
        #expect(!text.contains("left (Ctrl-C to cancel)"), "no countdown is redrawn while the person pastes")
        #expect(!text.contains("if one does not open by itself"), "no browser is promised with --no-browser")
    }

    @Test("a pasted code is exchanged at the real token endpoint (a made-up code is refused there: invalid_grant)")
    func pastedCode() async throws {
        let (status, text) = try await run { redirect, state in ["\(redirect)?code=made-up-code&state=\(state)"] }
        #expect(status == 77, "\(text)")
        #expect(text.contains("Browser sign-in received; getting tokens"))
        #expect(text.contains("invalid_grant"))
    }
}
