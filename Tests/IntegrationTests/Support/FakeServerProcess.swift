import Foundation
import PortalAuth

/// A Python fake of `Tests/Fakes/` started on 127.0.0.1: it prints `PORT <n>` once bound, and stops when its stdin
/// closes (`stop()`, or this test process ending) or after its `--lifetime`. One way to start them for every suite.
final class FakeServerProcess: @unchecked Sendable {
    /// The port it listens on.
    let port: Int
    /// `http://127.0.0.1:PORT`.
    var base: String { "http://127.0.0.1:\(port)" }
    private let process: ChildProcess
    private let stdin = Pipe()

    /// Starts `Tests/Fakes/<script>` with `arguments` and waits for its port (blocking: call it off the cooperative
    /// pool, through `BlockingWork.run`).
    init(script: String, arguments: [String]) throws {
        let path = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fakes/\(script)")
        process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", path.path] + arguments
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        var output = Data()
        while !output.contains(UInt8(ascii: "\n")) {
            let chunk = stdout.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            output.append(chunk)
        }
        let line = String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard line.hasPrefix("PORT "), let port = Int(line.dropFirst(5)) else {
            process.terminate()
            throw TestFailure("\(script) did not start: \(line)")
        }
        self.port = port
    }

    /// Stops it (closing its stdin, then SIGTERM).
    func stop() {
        try? stdin.fileHandleForWriting.close()
        if process.isRunning { process.terminate() }
    }
}
