import Foundation
import PortalAuth
import Testing

/// The built tool on a real pseudo-terminal (through `script`), on a machine without a display (see
/// ``HeadlessEnvironment``): what a person types goes to its input, and its terminal output is read back.
final class TerminalTool: @unchecked Sendable {
    private let process = ChildProcess()
    private let input = Pipe()
    private let output = Pipe()

    init(_ arguments: [String], environment extra: [String: String]) throws {
        let command = ([BinaryLocator.toolPath] + arguments)
            .map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qfec", command, "/dev/null"]
        process.environment = HeadlessEnvironment.make(extra.merging(["TERM": "dumb"]) { $1 })
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
    }

    deinit { if process.isRunning { process.terminate() } }

    /// Output read past the end of what ``read(until:timeout:)`` returned.
    private var unread = ""

    /// The terminal's output from where the last read ended up to and including the next `marker` (or to the end
    /// of output, or what came within `timeout`); output read past the marker is kept for the next read.
    func read(until marker: String, timeout: Duration = .seconds(30)) -> String {
        if !unread.contains(marker) { unread += readOutput(of: output, until: marker, timeout: timeout) }
        guard let found = unread.range(of: marker) else {
            defer { unread = "" }
            return unread
        }
        let text = String(unread[..<found.upperBound])
        unread = String(unread[found.upperBound...])
        return text
    }

    /// The terminal's output up to `prompt`, and the portal authorization URL printed in it.
    func authorizationURL(until prompt: String, portal: String) throws -> (text: String, url: String) {
        let text = read(until: prompt)
        let url = try #require(
            text.split(whereSeparator: \.isWhitespace).first {
                $0.hasPrefix("\(portal)/sharing/rest/oauth2/authorize?")
            },
            "no authorization URL in: \(text)")
        return (text, String(url))
    }

    /// Types `line` and Enter.
    func type(_ line: String) {
        // A tool that already ended is reported by the test's expectations, not by a crash of the test process.
        try? input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Types Ctrl-D at the start of a line: the terminal's end of input.
    func endInput() {
        try? input.fileHandleForWriting.write(contentsOf: Data([4]))
    }

    /// Waits for the tool to end; its exit status and the rest of the terminal's output.
    func finish() async throws -> (status: Int32, rest: String) {
        let (process, output) = (self.process, self.output)
        let ended = try await BlockingWork.run {
            process.waitUntilExit()
            return (
                process.terminationStatus,
                String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            )
        }
        defer { unread = "" }
        return (ended.0, unread + ended.1)
    }
}
