import Foundation
import PortalAuth
import Synchronization

/// The built tool started in the background on a machine without a display (see ``HeadlessEnvironment``), with
/// standard input from /dev/null (no terminal). Its standard error is collected by a thread of its own; waits poll
/// what was collected, with a time limit (a hang guard only).
final class HeadlessTool: @unchecked Sendable {
    private let process = ChildProcess()
    private let errors = Pipe()
    private let collected = Collected()

    /// What the reader thread shares with the test.
    private final class Collected: Sendable {
        struct State {
            var text = ""
            var closed = false
        }
        let state = Mutex(State())
    }

    init(_ arguments: [String], environment extra: [String: String]) throws {
        process.executableURL = URL(fileURLWithPath: BinaryLocator.toolPath)
        process.arguments = arguments
        process.environment = HeadlessEnvironment.make(extra)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        let (handle, collected) = (errors.fileHandleForReading, self.collected)
        BlockingWork.detach {
            while case let chunk = handle.availableData, !chunk.isEmpty {
                collected.state.withLock { $0.text += String(decoding: chunk, as: UTF8.self) }
            }
            collected.state.withLock { $0.closed = true }
        }
    }

    deinit { stop() }

    /// What the tool wrote to stderr so far.
    var stderr: String { collected.state.withLock { $0.text } }

    /// Waits until stderr contains `marker`; false after `timeout`.
    func waitFor(_ marker: String, timeout: Duration = .seconds(30)) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if stderr.contains(marker) { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return false
    }

    /// Sends `signal` (SIGINT for Ctrl-C).
    func send(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// The exit status once the tool ended; killed (and 128 + SIGKILL) after `timeout`, a hang guard.
    func finish(timeout: Duration = .seconds(60)) -> Int32 {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        let drained = ContinuousClock.now + .seconds(5)
        while !collected.state.withLock({ $0.closed }) && ContinuousClock.now < drained {
            Thread.sleep(forTimeInterval: 0.05)
        }
        return process.terminationReason == .uncaughtSignal
            ? 128 + process.terminationStatus : process.terminationStatus
    }

    /// Ends the tool if it still runs.
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}
