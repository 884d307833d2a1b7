package import Foundation
import Glibc
import Synchronization
internal import PortalAuthCore

/// A server process a test starts and waits for: the one way the unit and integration tests start one (the fakes of
/// `Tests/Fakes/`, Xvfb, …).
///
/// It starts a command (an executable, its arguments, environment and working directory) with its standard output
/// and standard error in a log file, waits until it is ready (a line of its output, or a port accepting
/// connections) or until a deadline, and keeps its process ID. `stop()` ends it by that ID: its standard input (a
/// pipe only this process holds) is closed, then SIGTERM, then SIGKILL after a grace; it is reaped, and a second
/// `stop()` does nothing more. It is stopped when the value goes away, and a server that reads its standard input
/// ends by itself when this test process ends however it ends (the pipe closes). When it does not get ready, the
/// error names the command, what was waited for, and the tail of its log.
package final class TestServerProcess: @unchecked Sendable {
    /// What "ready" means for a server.
    package struct Readiness: Sendable, CustomStringConvertible {
        fileprivate enum Kind {
            case line(@Sendable (String) -> Bool)
            case port(host: String, port: Int)
        }
        fileprivate let kind: Kind
        /// What is waited for, in words (for errors).
        package let description: String

        /// A whole line of its output (standard output or standard error) that starts with `prefix`.
        package static func line(startingWith prefix: String) -> Readiness {
            Readiness(
                kind: .line { $0.hasPrefix(prefix) }, description: "a line starting with \"\(prefix)\" on its output")
        }

        /// A whole line of its output for which `predicate` holds; `description` says which, for errors.
        package static func line(_ description: String, where predicate: @escaping @Sendable (String) -> Bool)
            -> Readiness
        {
            Readiness(kind: .line(predicate), description: "\(description) on its output")
        }

        /// A line `PORT <n>` on its output: the port it bound (`announcedPort()` reads it), as the fakes print it.
        package static var announcedPort: Readiness {
            line("a line \"PORT <n>\"") { $0.hasPrefix("PORT ") && Int($0.dropFirst(5)) != nil }
        }

        /// A TCP connection to `host` (an IPv4 address) and `port` accepted.
        package static func port(_ port: Int, host: String = "127.0.0.1") -> Readiness {
            Readiness(kind: .port(host: host, port: port), description: "a connection to \(host):\(port) accepted")
        }
    }

    /// The server could not be started or did not get ready.
    package struct StartError: Error, CustomStringConvertible {
        /// The command line.
        package let command: String
        /// What was waited for.
        package let waitedFor: String
        /// Why the wait ended: the process exited, or the deadline passed.
        package let reason: String
        /// The last lines of its log.
        package let logTail: String

        package var description: String {
            "`\(command)` did not get ready (waited for \(waitedFor)): \(reason). The end of its log:\n\(logTail)"
        }
    }

    /// The command line, for messages.
    package let command: String
    /// Its process ID.
    package let processIdentifier: Int32
    /// The file its standard output and standard error go to (removed when the value goes away).
    package let logURL: URL
    /// The ready line seen (with `Readiness.line`), without its line break.
    package let readyLine: String?

    private let process: ChildProcess
    private let input: Pipe
    private let stopped = Mutex(false)

    /// Starts `executable` (a path, or a name looked up in `PATH`) with `arguments`, `environment` (the whole
    /// environment) and `directory`, and waits (blocking: off the cooperative pool, or through `start`) until it is
    /// ready or `deadline` has passed. Its standard input is a pipe closed by `stop()`.
    package init(
        _ executable: String, _ arguments: [String] = [],
        environment: [String: String] = ProcessInfo.processInfo.environment, directory: URL? = nil,
        readiness: Readiness, deadline: Duration = .seconds(60)
    ) throws {
        let command = ([executable] + arguments).joined(separator: " ")
        let name = ([executable] + arguments.prefix(1)).map { URL(fileURLWithPath: $0).lastPathComponent }
            .joined(separator: "-")
        let logURL = FileManager.default.temporaryDirectory
            .appendingPathComponent("pa-server-\(name)-\(UUID().uuidString).log")
        guard FileManager.default.createFile(atPath: logURL.path, contents: nil),
            let log = FileHandle(forWritingAtPath: logURL.path)
        else {
            throw StartError(
                command: command, waitedFor: readiness.description, reason: "cannot create its log \(logURL.path)",
                logTail: "")
        }
        defer { try? log.close() }
        let process = ChildProcess()
        if executable.contains("/") {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [executable] + arguments
        }
        process.environment = environment
        process.currentDirectoryURL = directory
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = log
        process.standardError = log
        do {
            try process.run()
        } catch {
            try? FileManager.default.removeItem(at: logURL)
            throw StartError(command: command, waitedFor: readiness.description, reason: "\(error)", logTail: "")
        }
        self.command = command
        self.process = process
        self.input = input
        self.logURL = logURL
        self.processIdentifier = process.processIdentifier

        let readyLine: String?
        do {
            readyLine = try Self.waitUntilReady(
                process, log: logURL, readiness: readiness, deadline: ContinuousClock.now.advanced(by: deadline))
        } catch let reason as NotReady {
            Self.end(process, input: input, grace: .seconds(2))
            let error = StartError(
                command: command, waitedFor: readiness.description, reason: reason.description,
                logTail: Self.tail(of: logURL, lines: 40))
            try? FileManager.default.removeItem(at: logURL)
            throw error
        }
        self.readyLine = readyLine
    }

    /// Starts the server off the cooperative pool and waits for it (see `init`).
    package static func start(
        _ executable: String, _ arguments: [String] = [],
        environment: [String: String] = ProcessInfo.processInfo.environment, directory: URL? = nil,
        readiness: Readiness, deadline: Duration = .seconds(60)
    ) async throws -> TestServerProcess {
        try await BlockingWork.run {
            try TestServerProcess(
                executable, arguments, environment: environment, directory: directory, readiness: readiness,
                deadline: deadline)
        }
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: logURL)
    }

    /// Whether it is still running.
    package var isRunning: Bool { process.isRunning }

    /// The last `lines` lines of its log, for a failure's message.
    package func logTail(lines: Int = 40) -> String { Self.tail(of: logURL, lines: lines) }

    /// Stops it by its process ID: closes its standard input, sends SIGTERM, and SIGKILL if it still runs after
    /// `grace`; returns once it has been reaped. Calling it again does nothing more.
    package func stop(grace: Duration = .seconds(2)) {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        if first { Self.end(process, input: input, grace: grace) } else { process.waitUntilExit() }
    }

    // MARK: - Waiting and ending

    /// Why a server is not ready.
    private struct NotReady: Error, CustomStringConvertible {
        let description: String
    }

    /// Polls the log (whole lines only) or the port until ready; throws `NotReady` when the process ends first or
    /// the deadline passes.
    private static func waitUntilReady(
        _ process: ChildProcess, log: URL, readiness: Readiness, deadline: ContinuousClock.Instant
    ) throws -> String? {
        var offset: UInt64 = 0
        var partial = Data()
        let reader = try? FileHandle(forReadingFrom: log)
        defer { try? reader?.close() }
        while true {
            // Whether it had ended is read before its output, so that a line written just before the end counts.
            let ended = !process.isRunning
            switch readiness.kind {
            case .line(let predicate):
                if let reader {
                    try? reader.seek(toOffset: offset)
                    let chunk = reader.readDataToEndOfFile()
                    offset += UInt64(chunk.count)
                    partial.append(chunk)
                    while let newline = partial.firstIndex(of: UInt8(ascii: "\n")) {
                        let line = String(decoding: partial[partial.startIndex..<newline], as: UTF8.self)
                        partial.removeSubrange(partial.startIndex...newline)
                        if predicate(line) { return line }
                    }
                }
            case .port(let host, let port):
                if accepts(host: host, port: port) { return nil }
            }
            if ended {
                let how =
                    process.terminationReason == .exit
                    ? "exit status \(process.terminationStatus)" : "signal \(process.terminationStatus)"
                throw NotReady(description: "it ended (\(how)) before it was ready")
            }
            guard ContinuousClock.now < deadline else {
                throw NotReady(description: "the deadline passed first (it still runs, and is stopped now)")
            }
            usleep(20_000)
        }
    }

    /// Whether a TCP connection to `host:port` is accepted (then closed at once).
    private static func accepts(host: String, port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        guard inet_pton(AF_INET, host == "localhost" ? "127.0.0.1" : host, &address.sin_addr) == 1 else { return false }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    /// Closes its standard input, SIGTERM, SIGKILL after `grace`, and waits until it is reaped.
    private static func end(_ process: ChildProcess, input: Pipe, grace: Duration) {
        try? input.fileHandleForWriting.close()
        let pid = process.processIdentifier
        if process.isRunning { kill(pid, SIGTERM) }
        let deadline = ContinuousClock.now.advanced(by: grace)
        while process.isRunning && ContinuousClock.now < deadline { usleep(10_000) }
        if process.isRunning { kill(pid, SIGKILL) }
        process.waitUntilExit()
    }

    /// The last `lines` lines of the file at `url`, indented.
    private static func tail(of url: URL, lines: Int) -> String {
        let text = FileManager.default.contents(atPath: url.path).map { String(decoding: $0, as: UTF8.self) } ?? ""
        let last = text.split(separator: "\n", omittingEmptySubsequences: false).reversed()
            .drop { $0.isEmpty }.prefix(lines).reversed()
        return last.isEmpty ? "  (nothing)" : last.map { "  \($0)" }.joined(separator: "\n")
    }
}

// MARK: - The Python fakes

extension TestServerProcess {
    /// Starts `Tests/Fakes/<script>` (a Python fake that binds 127.0.0.1 on an ephemeral port, prints `PORT <n>`, and
    /// stops when its standard input closes) with `arguments`, blocking until it has printed its port.
    package static func fake(_ script: String, _ arguments: [String]) throws -> TestServerProcess {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fakes/\(script)").path
        return try TestServerProcess("python3", [path] + arguments, readiness: .announcedPort)
    }

    /// The port `<n>` of a server whose ready line was `PORT <n>` (a fake's); throws for any other.
    package func announcedPort() throws -> Int {
        guard let readyLine, readyLine.hasPrefix("PORT "), let port = Int(readyLine.dropFirst(5)) else {
            throw StartError(
                command: command, waitedFor: "a line \"PORT <n>\"", reason: "its ready line was \(readyLine ?? "none")",
                logTail: logTail())
        }
        return port
    }

    /// `http://127.0.0.1:<n>` for a server whose ready line was `PORT <n>` (a fake's).
    package func announcedBase() throws -> String { "http://127.0.0.1:\(try announcedPort())" }
}
