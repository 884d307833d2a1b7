import Dispatch
import Foundation
import PortalAuth

/// Runs the built `portal-auth` binary and captures what it printed and how it exited.
///
/// A run never hangs a test: after `timeout` the tool is killed (SIGTERM, then SIGKILL a second later)
/// and the result says so.
enum ToolRunner {
    /// What one run produced.
    struct Result: Sendable, CustomStringConvertible {
        /// The exit status (128 + the signal number when the tool was killed by a signal).
        let status: Int32
        /// Everything written to stdout, decoded as UTF-8.
        let stdout: String
        /// Everything written to stderr, decoded as UTF-8.
        let stderr: String
        /// Whether the tool had to be killed for running longer than the timeout.
        let timedOut: Bool

        /// The non-empty lines of stderr.
        var stderrLines: [String] { stderr.split(separator: "\n").map(String.init) }
        /// The non-empty lines of stdout.
        var stdoutLines: [String] { stdout.split(separator: "\n").map(String.init) }

        var description: String {
            "exit \(status)\(timedOut ? " (timed out)" : "")\n--- stdout\n\(stdout)--- stderr\n\(stderr)"
        }
    }

    /// Runs `portal-auth` with `arguments`.
    ///
    /// - Parameters:
    ///   - arguments: The command-line arguments (without the program name).
    ///   - environment: Variables added to (or replacing those of) this process's environment.
    ///   - removing: Variables of this process's environment the tool does not get (a machine without them).
    ///   - stdin: Bytes written to the tool's standard input, which is then closed; empty when `nil`.
    ///   - directory: The working directory; this process's when `nil`.
    ///   - timeout: How long the tool may run before it is killed.
    static func run(
        _ arguments: [String],
        environment: [String: String] = [:],
        removing: [String] = [],
        stdin: Data? = nil,
        directory: URL? = nil,
        timeout: Duration = .seconds(30),
        executable: String = BinaryLocator.toolPath
    ) async throws -> Result {
        // Blocking waits stay off the cooperative thread pool.
        try await BlockingWork.run {
            try runBlocking(
                arguments, environment: environment, removing: removing, stdin: stdin, directory: directory,
                timeout: timeout, executable: executable)
        }
    }

    // MARK: - Implementation

    /// A value shared between the threads of one run.
    private final class Shared<Value: Sendable>: @unchecked Sendable {
        private let lock = NSLock()
        private var value: Value
        init(_ value: Value) { self.value = value }
        func set(_ newValue: Value) { lock.withLock { value = newValue } }
        func get() -> Value { lock.withLock { value } }
    }

    private static func runBlocking(
        _ arguments: [String], environment: [String: String], removing: [String], stdin: Data?, directory: URL?,
        timeout: Duration, executable: String
    ) throws -> Result {
        // Writing to a tool that has already exited must fail with EPIPE, not kill the test runner.
        signal(SIGPIPE, SIG_IGN)

        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.filter { !removing.contains($0.key) }.merging(
            environment
        ) { $1 }
        if let directory { process.currentDirectoryURL = directory }
        let output = Pipe(), errors = Pipe(), input = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = input
        try process.run()
        let pid = process.processIdentifier

        let timedOut = Shared(false)
        let killer = DispatchWorkItem {
            timedOut.set(true)
            kill(pid, SIGTERM)
            DispatchQueue.global().asyncAfter(deadline: .now() + 1) { kill(pid, SIGKILL) }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout.timeInterval, execute: killer)

        // Read both pipes at once, so that a full pipe never blocks the tool.
        let stdoutData = Shared(Data()), stderrData = Shared(Data())
        let readers = DispatchGroup()
        for (pipe, sink) in [(output, stdoutData), (errors, stderrData)] {
            let handle = pipe.fileHandleForReading
            DispatchQueue.global().async(group: readers) { sink.set(handle.readDataToEndOfFile()) }
        }
        if let stdin { try? input.fileHandleForWriting.write(contentsOf: stdin) }
        try? input.fileHandleForWriting.close()

        process.waitUntilExit()
        killer.cancel()
        _ = readers.wait(timeout: .now() + 5)

        let status =
            process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
        return Result(
            status: status,
            stdout: String(decoding: stdoutData.get(), as: UTF8.self),
            stderr: String(decoding: stderrData.get(), as: UTF8.self),
            timedOut: timedOut.get())
    }
}

extension Duration {
    /// The duration in seconds, for Dispatch deadlines.
    fileprivate var timeInterval: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
