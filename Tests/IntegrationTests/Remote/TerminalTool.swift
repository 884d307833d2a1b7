import Foundation
import PortalAuth

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

    /// The terminal's output up to the first time it contains `marker` (or the end of output, or `timeout`).
    func read(until marker: String, timeout: Duration = .seconds(30)) -> String {
        readOutput(of: output, until: marker, timeout: timeout)
    }

    /// Types `line` and Enter.
    func type(_ line: String) {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    /// Waits for the tool to end; its exit status and the rest of the terminal's output.
    func finish() async -> (status: Int32, rest: String) {
        let (process, output) = (self.process, self.output)
        return await offPool {
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
        }
    }
}
