import Foundation
import Testing
@testable import PortalAuth

@Suite("Browser command")
struct CommandBrowserOpenerTests {
    @Test(
        "splits words like a shell",
        arguments: [
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
        #expect(
            CommandBrowserOpener.systemDefault(override: "mybrowser", environment: ["BROWSER": "other"]).commands == [
                "mybrowser"
            ])
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

// The time limit turns a browser command that never ends (a shell waiting on a blocked SIGCHLD) into a failure.
@Suite("Browser command: what the browser inherits", .timeLimit(.minutes(1)))
struct BrowserInheritanceTests {
    /// Runs `script` (sh) as the browser command and returns what it wrote to `out` in a fresh folder.
    private static func run(_ script: String, keepingOpen descriptor: Int32) async throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pa-browser-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("out").path
        var opener = CommandBrowserOpener(command: "sh -c '\(script) > \(output) & wait' sh")
        opener.launchDirectory = directory
        #expect(descriptor > 2)
        let status = await withCheckedContinuation { continuation in
            do {
                try opener.open(URL(string: "http://127.0.0.1:9/authorize")!) { continuation.resume(returning: $0) }
            } catch {
                continuation.resume(returning: -1)
            }
        }
        #expect(status == 0)
        return try String(contentsOfFile: output, encoding: .utf8)
    }

    @Test("the browser starts with only standard input, output and error open (issue 25.9)")
    func onlyStandardDescriptors() async throws {
        // A descriptor that is not close-on-exec, as libcurl's socketpair and sockets are.
        let inherited = dup(STDERR_FILENO)
        #expect(inherited > 2)
        defer { close(inherited) }
        #expect(fcntl(inherited, F_GETFD) & FD_CLOEXEC == 0)
        let listed = try await Self.run("ls /proc/$$/fd", keepingOpen: inherited)
        let descriptors = listed.split(whereSeparator: \.isNewline).compactMap { Int($0) }.sorted()
        // `ls` runs in the background with its own redirection (dash would otherwise keep a copy of its stdout on fd
        // 10 while it runs), so the listing is of the descriptors the shell got.
        #expect(descriptors == [0, 1, 2], "the browser command saw \(descriptors)")
    }

    @Test(
        "the browser's standard output and error go to /dev/null, never the terminal or the tool's output (issue 28.4)")
    func outputGoesNowhere() async throws {
        let inherited = dup(STDERR_FILENO)
        defer { close(inherited) }
        let links = try await Self.run("readlink /proc/$$/fd/0 /proc/$$/fd/1 /proc/$$/fd/2", keepingOpen: inherited)
        #expect(links.split(whereSeparator: \.isNewline) == ["/dev/null", "/dev/null", "/dev/null"])
    }

    @Test("the browser starts with no signal blocked (a launcher script waiting for its children would hang)")
    func noBlockedSignals() async throws {
        let inherited = dup(STDERR_FILENO)
        defer { close(inherited) }
        let status = try await Self.run(#"grep -E "^Sig(Blk|Ign)" /proc/$$/status"#, keepingOpen: inherited)
        func mask(_ name: String) -> UInt64? {
            status.split(whereSeparator: \.isNewline).first { $0.hasPrefix(name + ":") }
                .flatMap { UInt64($0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces), radix: 16) }
        }
        #expect(mask("SigBlk") == 0, "\(status)")
        // Of the standard signals (1 to 31) none is ignored; glibc's internal 32 and 33 are not the tool's to reset.
        #expect(mask("SigIgn").map { $0 & 0x7fff_ffff } == 0, "\(status)")
    }
}
