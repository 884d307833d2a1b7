import Foundation
import Testing
@testable import PortalAuth

@Suite("Browser command")
struct CommandBrowserOpenerTests {
    @Test("splits words like a shell", arguments: [
        ("xdg-open", ["xdg-open"]),
        ("firefox --new-window", ["firefox", "--new-window"]),
        ("'/opt/My Browser/run' -a \"x y\"", ["/opt/My Browser/run", "-a", "x y"]),
        ("open\\ me %s --flag", ["open me", "%s", "--flag"]),
        ("  ", []),
    ])
    func splitting(line: String, expected: [String]) {
        #expect(CommandBrowserOpener.splitWords(line) == expected)
    }

    @Test("precedence: override, then $BROWSER (a list), then xdg-open")
    func precedence() {
        #expect(CommandBrowserOpener.systemDefault(override: "mybrowser", environment: ["BROWSER": "other"]).commands == ["mybrowser"])
        #expect(CommandBrowserOpener.systemDefault(environment: ["BROWSER": "a:b"]).commands == ["a", "b"])
        #expect(CommandBrowserOpener.systemDefault(environment: [:]).commands == ["xdg-open"])
    }

    @Test("runs the command with the launch page as its last argument and reports the exit status")
    func runsCommand() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pa-browser-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("out").path
        let opener = CommandBrowserOpener(command: "sh -c 'printf %s \"$1\" > \(output); exit 3' sh")
        let url = URL(string: "http://127.0.0.1:9/authorize?a=1&b=2")!
        let status = await withCheckedContinuation { continuation in
            do {
                try opener.open(url) { continuation.resume(returning: $0) }
            } catch {
                continuation.resume(returning: -1)
            }
        }
        #expect(status == 3)
        // The command gets a private page that forwards to the URL, never the URL itself.
        let page = try #require(URL(string: try String(contentsOfFile: output, encoding: .utf8)))
        #expect(page.isFileURL)
        #expect(try String(contentsOf: page, encoding: .utf8).contains("url=http://127.0.0.1:9/authorize?a=1&amp;b=2"))
    }

    @Test("a missing command is an error naming it")
    func missingCommand() {
        let opener = CommandBrowserOpener(command: "/nonexistent/browser-xyz")
        #expect(throws: BrowserError.self) { try opener.open(URL(string: "http://127.0.0.1/")!) { _ in } }
    }
}
