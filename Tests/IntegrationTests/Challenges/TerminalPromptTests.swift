import Foundation
import Testing
@testable import PortalAuth

/// The `Authenticator`'s terminal prompt of `portal-auth request --interactive`, typed into a real pseudo-terminal
/// (`script` from util-linux): the username is echoed, the password never.
@Suite("request --interactive on a terminal", .serialized, .enabled(if: TestServer.isConfigured))
struct TerminalPromptTests {
    /// The tool running under `script`, its terminal's output readable and its keyboard writable. Used by one
    /// thread at a time (the test hands it from step to step), hence the unchecked conformance.
    final class Terminal: @unchecked Sendable {
        let process = Process()
        private let keyboard = Pipe()
        private let screen = Pipe()
        private(set) var shown = ""

        init(_ arguments: [String], environment: [String: String]) throws {
            let command = ([BinaryLocator.toolPath] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
            process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
            process.arguments = ["-qefc", command, "/dev/null"]
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            process.standardInput = keyboard
            process.standardOutput = screen
            process.standardError = FileHandle.nullDevice
            try process.run()
        }

        /// `portal-auth request --interactive` for `path` on the test portal, with a store of its own.
        static func request(_ path: String, store: ScratchStore) throws -> Terminal {
            let server = try TestServer.current()
            return try Terminal(["request", "\(server.portal)\(path)", "--interactive"], environment: ["PORTAL_AUTH_STORE": store.path])
        }

        /// Waits until the screen shows `text` (after what was already read).
        func waitFor(_ text: String, timeout: Duration = .seconds(20)) -> Bool {
            let start = shown.endIndex
            let seen = readOutput(of: screen, until: text, timeout: timeout)
            shown += seen
            return shown[start...].contains(text)
        }

        /// Types `line` and Enter.
        func type(_ line: String) throws {
            try press(line + "\r")
        }

        /// Types `keys` as they are (e.g. "\u{03}" for Ctrl-C).
        func press(_ keys: String) throws {
            try keyboard.fileHandleForWriting.write(contentsOf: Data(keys.utf8))
        }

        /// Waits for the end and returns the exit status with everything shown.
        func finish() -> Int32 {
            shown += String(decoding: screen.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return process.terminationStatus
        }
    }

    @Test("a token challenge asks for username and password; a wrong password is reported and asked again; never echoed")
    func generateToken() async throws {
        let store = try ScratchStore()
        let password = try TestServer.current().password
        let terminal = try Terminal.request("/sharing/rest/portals/self?f=json", store: store)
        defer { if terminal.process.isRunning { terminal.process.terminate() } }
        try await offPoolWait {
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
        let status = await offPoolValue { terminal.finish() }
        #expect(status == 0, "\(terminal.shown)")
        #expect(terminal.shown.contains("\"username\": \"alice\""))
        #expect(!terminal.shown.contains(password))
        #expect(!terminal.shown.contains("not-alices-password"))
    }

    @Test("Ctrl-C at the username prompt ends the command at once with 130", arguments: [false, true])
    func interrupted(atPassword: Bool) async throws {
        let store = try ScratchStore()
        let terminal = try Terminal.request("/rest/services?f=json", store: store)
        defer { if terminal.process.isRunning { terminal.process.terminate() } }
        try await offPoolWait {
            #expect(terminal.waitFor("Username (empty to skip): "))
            if atPassword {
                try terminal.type("alice")
                #expect(terminal.waitFor("Password for alice: "))
            }
            try terminal.press("\u{03}")
        }
        let status = await offPoolValue { terminal.finish() }
        #expect(status == 130, "\(terminal.shown)")
        #expect(terminal.shown.contains("interrupted"))
    }

    @Test("declining with an empty username exits 77")
    func declined() async throws {
        let store = try ScratchStore()
        let terminal = try Terminal.request("/rest/services?f=json", store: store)
        defer { if terminal.process.isRunning { terminal.process.terminate() } }
        try await offPoolWait {
            #expect(terminal.waitFor("Username (empty to skip): "))
            try terminal.type("")
        }
        let status = await offPoolValue { terminal.finish() }
        #expect(status == 77, "\(terminal.shown)")
        #expect(terminal.shown.contains("Token Required"))
    }
}

/// Runs blocking terminal work off the cooperative pool.
private func offPoolWait(_ body: @escaping @Sendable () throws -> Void) async throws {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
    }
}

private func offPoolValue<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(returning: body()) }
    }
}
