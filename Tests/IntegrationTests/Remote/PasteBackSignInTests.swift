import Foundation
import Testing
@testable import PortalAuth

/// `portal-auth login --portal …` on a machine without a display and with no option: on a terminal (a real
/// pseudo-terminal through `script`) the URL is printed with a paste prompt on a line of its own and no countdown;
/// the headless browser signs in "on another machine" (its final redirect cannot reach this machine's ports) and the
/// address it ends on is pasted back. Without a terminal the tool fails at once with the command to run.
@Suite("Paste-back sign-in without a display", .serialized, .enabled(if: TestServer.isConfigured))
struct PasteBackSignInTests {
    @Test(
        "no option, on a terminal: a bad paste is explained in one sentence and asked again; the real address signs in")
    func pasteBack() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        let finalFile = store.directory.appendingPathComponent("final-url").path
        let tool = try TerminalTool(
            ["login", "--portal", server.portal, "--client-id", server.clientID, "--timeout", "120"],
            environment: ["PORTAL_AUTH_STORE": store.path])

        var (text, url) = try tool.authorizationURL(
            until: "Paste that address here and press Enter:", portal: server.portal)
        tool.type("not a url")
        text += tool.read(until: "Paste that address here and press Enter:")

        let (status, rest) = try await Self.signInElsewhere(url, pastingInto: tool, finalFile: finalFile)
        text += rest
        #expect(status == 0, "\(text)")
        #expect(text.contains("No browser is opened here: there is no display"))
        #expect(text.contains("Open this URL in a browser on any machine and sign in:"))
        #expect(!text.contains("if one does not open by itself"), "no promise of a browser that will not open")
        #expect(!text.contains("left (Ctrl-C to cancel)"), "no countdown is drawn over what is typed")
        #expect(!text.contains("\r\u{1B}[2K"), "nothing redraws the line")
        let lines = text.components(separatedBy: CharacterSet.newlines).map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(
            lines.filter { $0 == "Paste that address here and press Enter:" }.count == 2,
            "the prompt on its own line, asked again")
        #expect(
            lines.contains(
                "The pasted address is not the awaited sign-in response: it is not an address; paste the whole address from the browser's address bar."
            ))
        #expect(text.contains("Signed in to \(server.portal) as alice"))
        #expect(try store.entries().count == 1)
    }

    @Test(
        "a failing $BROWSER on a desktop, on a terminal: the one URL shown stays valid and its pasted final address signs in"
    )
    func failingBrowserKeepsTheURL() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        let finalFile = store.directory.appendingPathComponent("final-url").path
        // A display, so the browser is tried; a browser command that writes to its output and exits with 1.
        let tool = try TerminalTool(
            ["login", "--portal", server.portal, "--client-id", server.clientID, "--timeout", "120"],
            environment: [
                "PORTAL_AUTH_STORE": store.path, "DISPLAY": ":99",
                "BROWSER": "sh -c 'echo no browser here; exit 1' browser",
            ])

        var (text, url) = try tool.authorizationURL(
            until: "Paste that address here and press Enter:", portal: server.portal)
        let (status, rest) = try await Self.signInElsewhere(url, pastingInto: tool, finalFile: finalFile)
        text += rest
        #expect(status == 0, "\(text)")
        let urls = text.split(whereSeparator: \.isWhitespace).filter {
            $0.hasPrefix("\(server.portal)/sharing/rest/oauth2/authorize?")
        }
        #expect(urls.count == 1, "the sign-in URL is shown once, not again after the browser failed: \(text)")
        #expect(text.contains("portal-auth: warning: the browser command exited with status 1."))
        #expect(text.contains("Open the URL above in a browser on any machine and sign in."))
        #expect(text.contains("Signed in to \(server.portal) as alice"))
        #expect(try store.entries().count == 1)
    }

    @Test("Ctrl-D at the paste prompt ends the sign-in at once: exit 64, saying what to do, nothing stored")
    func endOfInputAtThePrompt() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        // The wait's own limit is far away: the tool must end on the end of input, not on it (exit 75).
        let tool = try TerminalTool(
            ["login", "--portal", server.portal, "--client-id", server.clientID, "--timeout", "60"],
            environment: ["PORTAL_AUTH_STORE": store.path])
        let text = tool.read(until: "Paste that address here and press Enter:")
        tool.endInput()
        let (status, rest) = try await tool.finish()
        #expect(status == 64, "\(text)\(rest)")
        #expect(rest.contains("standard input ended"), "\(rest)")
        #expect(rest.contains("paste the whole address"), "names what to do: \(rest)")
        #expect(!rest.contains("within 60 s"), "it did not wait for the time limit: \(rest)")
        #expect(!FileManager.default.fileExists(atPath: store.path), "nothing stored")
    }

    @Test("no terminal and no display: fails at once with the command to run, without starting xdg-open or waiting")
    func noTerminal() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        let tool = try HeadlessTool(
            ["login", "--portal", server.portal, "--client-id", server.clientID, "--timeout", "300"],
            environment: ["PORTAL_AUTH_STORE": store.path])
        defer { tool.stop() }
        // A hang guard far below --timeout: the old behaviour (waiting for the browser) is killed and fails here.
        let status = try await BlockingWork.run { tool.finish(timeout: .seconds(60)) }
        let text = tool.stderr
        #expect(status == 64, "\(text)")
        #expect(text.contains("there is no display"))
        #expect(
            text.contains(
                "Run this on a terminal:\n    portal-auth login --portal \(server.portal) --client-id \(server.clientID) --timeout 300"
            ), "\(text)")
        #expect(!text.contains("not found") && !text.contains("exited with status"), "no browser command was run")
    }

    /// The headless browser signs in at `url` "on another machine" (its final redirect cannot reach this machine's
    /// ports); the address it ends on is typed into `tool`, which then ends.
    static func signInElsewhere(_ url: String, pastingInto tool: TerminalTool, finalFile: String) async throws -> (
        status: Int32, rest: String
    ) {
        let browser = try TestBrowserRun.run(
            url,
            environment: [
                "PORTAL_AUTH_TEST_BROWSER_REMOTE": "1", "PORTAL_AUTH_TEST_BROWSER_FINAL_URL_FILE": finalFile,
            ])
        #expect(browser == 0)
        let final = try String(contentsOfFile: finalFile, encoding: .utf8).trimmingCharacters(
            in: .whitespacesAndNewlines)
        tool.type(final)
        return try await tool.finish()
    }
}
