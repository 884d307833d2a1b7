import Foundation
import PortalAuth

/// The built tool started in the background, for tests that act while it waits (Ctrl-C, pasting).
struct BackgroundTool {
    let process: ChildProcess
    let errors: Pipe

    /// Starts `portal-auth` with `arguments` and extra environment variables (with `inheriting` false, only those, as
    /// `env -i` runs it); stdout is discarded.
    static func start(_ arguments: [String], environment: [String: String], inheriting: Bool = true) throws
        -> BackgroundTool
    {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: BinaryLocator.toolPath)
        process.arguments = arguments
        process.environment = inheriting ? ProcessInfo.processInfo.environment.merging(environment) { $1 } : environment
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        return BackgroundTool(process: process, errors: errors)
    }

    /// What the tool wrote to stderr up to the first time it contains `marker` (or end of output, or `timeout`).
    func stderr(until marker: String, timeout: Duration = .seconds(20)) -> String {
        readOutput(of: errors, until: marker, timeout: timeout)
    }
}

/// Reads `pipe` until what was read contains `marker`, the pipe ends, or `timeout` passes.
func readOutput(of pipe: Pipe, until marker: String, timeout: Duration = .seconds(20)) -> String {
    var text = ""
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: timeout)
    while !text.contains(marker), clock.now < deadline {
        let chunk = pipe.fileHandleForReading.availableData
        if chunk.isEmpty { break }
        text += String(decoding: chunk, as: UTF8.self)
    }
    return text
}
