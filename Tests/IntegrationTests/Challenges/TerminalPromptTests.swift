import Foundation
import Synchronization
import Testing
@testable import PortalAuth

/// The `Authenticator`'s terminal prompt of `portal-auth request --interactive`, typed into a real pseudo-terminal
/// (`script` from util-linux): the username is echoed, the password never.
@Suite("request --interactive on a terminal", .serialized, .enabled(if: TestServer.isConfigured))
struct TerminalPromptTests {
    /// The tool running under `script`, its terminal's output read by a thread of its own and its keyboard
    /// writable. Waits never block on the terminal: they poll what was read, with a time limit. The process and
    /// pipes are used by one test thread at a time; what the reader shares is behind a lock.
    final class Terminal: @unchecked Sendable {
        /// Everything shown so far, and how far `waitFor` has matched.
        final class Screen: Sendable {
            struct State {
                var shown = ""
                var cursor: String.Index?
                var closed = false
            }
            let state = Mutex(State())
        }

        private let process: ChildProcess
        private let keyboard = Pipe()
        private let screen = Pipe()
        private let display = Screen()

        init(_ arguments: [String], environment: [String: String]) throws {
            let command = ([BinaryLocator.toolPath] + arguments).map {
                "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'"
            }.joined(separator: " ")
            let process = ChildProcess()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
            process.arguments = ["-qefc", command, "/dev/null"]
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            process.standardInput = keyboard
            process.standardOutput = screen
            process.standardError = FileHandle.nullDevice
            try process.run()
            self.process = process
            let (handle, display) = (screen.fileHandleForReading, self.display)
            BlockingWork.detach {
                while case let chunk = handle.availableData, !chunk.isEmpty {
                    display.state.withLock { $0.shown += String(decoding: chunk, as: UTF8.self) }
                }
                display.state.withLock { $0.closed = true }
            }
        }

        /// `portal-auth request --interactive` for `path` on the test portal, with a store of its own.
        static func request(_ path: String, store: ScratchStore) throws -> Terminal {
            let server = try TestServer.current()
            return try Terminal(
                ["request", "\(server.portal)\(path)", "--interactive"], environment: ["PORTAL_AUTH_STORE": store.path])
        }

        /// Everything the terminal showed so far.
        var shown: String { display.state.withLock { $0.shown } }

        /// Waits until the terminal shows `text` after the previous match; false after `timeout`.
        func waitFor(_ text: String, timeout: Duration = .seconds(20)) -> Bool {
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                let found = display.state.withLock { state -> Bool in
                    let from = state.cursor ?? state.shown.startIndex
                    guard let range = state.shown.range(of: text, range: from..<state.shown.endIndex) else {
                        return false
                    }
                    state.cursor = range.upperBound
                    return true
                }
                if found { return true }
                Thread.sleep(forTimeInterval: 0.05)
            }
            return false
        }

        /// Types `line` and Enter.
        func type(_ line: String) throws {
            try press(line + "\r")
        }

        /// Types `keys` as they are (e.g. "\u{03}" for Ctrl-C).
        func press(_ keys: String) throws {
            try keyboard.fileHandleForWriting.write(contentsOf: Data(keys.utf8))
        }

        /// The exit status, once the tool has ended (killed after `timeout`, then 128 + the signal).
        func finish(timeout: Duration = .seconds(30)) -> Int32 {
            let deadline = ContinuousClock.now + timeout
            while process.isRunning && ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.05) }
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            let drained = ContinuousClock.now + .seconds(5)  // the reader takes the last output
            while !display.state.withLock(\.closed) && ContinuousClock.now < drained {
                Thread.sleep(forTimeInterval: 0.05)
            }
            return process.terminationReason == .uncaughtSignal
                ? 128 + process.terminationStatus : process.terminationStatus
        }

        /// Ends the tool if it still runs.
        func stop() {
            if process.isRunning { process.terminate() }
        }
    }

    @Test(
        "a token challenge asks for username and password; a wrong password is reported and asked again; never echoed")
    func generateToken() async throws {
        let store = try ScratchStore()
        let password = try TestServer.current().password
        let terminal = try Terminal.request("/sharing/rest/portals/self?f=json", store: store)
        defer { terminal.stop() }
        try await BlockingWork.run {
            #expect(terminal.waitFor("Username (empty to skip): "))
            try terminal.type("alice")
            #expect(terminal.waitFor("Password for alice: "))
            try terminal.type("not-alices-password")
            #expect(terminal.waitFor("Unable to generate token."))
            #expect(terminal.waitFor("Username (empty to skip): "))
            try terminal.type("alice")
            #expect(terminal.waitFor("Password for alice: "))
            try terminal.type(password)
        }
        let status = try await BlockingWork.run { terminal.finish() }
        #expect(status == 0, "\(terminal.shown)")
        #expect(terminal.shown.contains("\"username\": \"alice\""))
        #expect(!terminal.shown.contains(password))
        #expect(!terminal.shown.contains("not-alices-password"))
    }

    @Test("Ctrl-C at the username prompt ends the command at once with 130", arguments: [false, true])
    func interrupted(atPassword: Bool) async throws {
        let store = try ScratchStore()
        let terminal = try Terminal.request("/rest/services?f=json", store: store)
        defer { terminal.stop() }
        try await BlockingWork.run {
            #expect(terminal.waitFor("Username (empty to skip): "))
            if atPassword {
                try terminal.type("alice")
                #expect(terminal.waitFor("Password for alice: "))
            }
            try terminal.press("\u{03}")
        }
        let status = try await BlockingWork.run { terminal.finish() }
        #expect(status == 130, "\(terminal.shown)")
        #expect(terminal.shown.contains("interrupted"))
    }

    @Test("declining with an empty username exits 77")
    func declined() async throws {
        let store = try ScratchStore()
        let terminal = try Terminal.request("/rest/services?f=json", store: store)
        defer { terminal.stop() }
        try await BlockingWork.run {
            #expect(terminal.waitFor("Username (empty to skip): "))
            try terminal.type("")
        }
        let status = try await BlockingWork.run { terminal.finish() }
        #expect(status == 77, "\(terminal.shown)")
        #expect(terminal.shown.contains("Token Required"))
    }
}
