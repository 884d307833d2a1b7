import Foundation
import Testing

/// What `portal-auth token` does on its way to a valid stored token (issue 46's slipped path), seen through
/// `strace -f`: no thread, no preferences file for a `--portal` selection, no `/dev/urandom` (jansson seeded through
/// `getrandom`), no IDNA tables for an ASCII portal URL, and with no agent running, one failed system call for the
/// default agent socket.
@Suite("token with a valid stored token does no more than it needs")
struct TokenStartupTests {
    /// The system calls `token` makes for `arguments` (those of `calls`), one line each, without process IDs.
    private static func trace(
        _ arguments: [String], in directory: URL, environment: [String: String], removing: [String] = []
    ) async throws -> (result: ToolRunner.Result, calls: [String]) {
        let file = directory.appendingPathComponent("trace-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try await ToolRunner.run(
            [
                "-f", "-qq", "-o", file.path, "-e",
                "trace=clone,clone3,fork,vfork,open,openat,access,socket,connect,stat,newfstatat,statx",
                "--", BinaryLocator.toolPath,
            ] + arguments, environment: environment, removing: removing, executable: "/usr/bin/strace")
        let text = try String(contentsOf: file, encoding: .utf8)
        let calls = text.split(separator: "\n").map { line in
            // "1234  openat(…)" under -f: the call without the process ID.
            String(line.drop { $0.isNumber }.drop { $0 == " " })
        }
        return (result, calls)
    }

    private static func directory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "portal-auth-startup-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return directory
    }

    @Test("a valid stored token: no thread, no preferences file, no /dev/urandom, no IDNA tables")
    func validTokenPath() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("credentials.json")
        try FastPathStore.valid.write(to: store, now: Int64(Date().timeIntervalSince1970))

        let (result, calls) = try await Self.trace(
            ["token", "--portal", FastPathStore.portal, "--store", store.path], in: directory, environment: [:])
        #expect(result.status == 0, "\(result)")
        #expect(calls.contains { $0.contains(store.path) }, "the trace lacks the store: \(calls)")
        #expect(!calls.contains { $0.hasPrefix("clone") || $0.hasPrefix("fork") }, "a thread or process: \(calls)")
        #expect(!calls.contains { $0.contains("preferences.json") }, "the preferences file was read: \(calls)")
        #expect(!calls.contains { $0.contains("/dev/urandom") }, "/dev/urandom was opened: \(calls)")
        // ICU looks for its UTS #46 data file when it builds its IDNA tables (for a host already in ASCII).
        #expect(!calls.contains { $0.contains("uts46") }, "ICU's IDNA tables were built: \(calls)")
    }

    @Test("no agent running: the default socket costs one failed access(2), no socket and no connect")
    func missingAgentSocket() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let runtime = directory.appendingPathComponent("run")
        try FileManager.default.createDirectory(
            at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])

        let (result, calls) = try await Self.trace(
            ["token", "--portal", FastPathStore.portal], in: directory,
            environment: [
                "XDG_RUNTIME_DIR": runtime.path, "XDG_STATE_HOME": directory.appendingPathComponent("state").path,
                "HOME": directory.path,
            ],
            removing: ["PORTAL_AUTH_AGENT", "PORTAL_AUTH_STORE", "DBUS_SESSION_BUS_ADDRESS"])
        #expect(result.status == 77, "nothing is stored: \(result)")
        let socketCalls = calls.filter { $0.contains("portal-auth/agent.sock") }
        #expect(socketCalls.count == 1, "\(socketCalls)")
        #expect(socketCalls.first?.hasPrefix("access(") == true, "\(socketCalls)")
        #expect(!calls.contains { $0.hasPrefix("socket(AF_UNIX") }, "a socket was made: \(calls)")
    }
}
