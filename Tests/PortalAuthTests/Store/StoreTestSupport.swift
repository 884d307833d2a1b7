import Foundation
import Glibc
import Testing
@testable import PortalAuth
@testable import PortalAuthCore
@testable import PortalAuthStore

/// A private (0700) temporary directory, removed with everything in it when released.
final class TemporaryDirectory {
    let path: String

    init() throws {
        var template = Array("\(NSTemporaryDirectory())/portal-auth-store-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw SystemError(call: "mkdtemp", errno: errno) }
        path = String(decoding: UnsafeRawBufferPointer(start: made, count: strlen(made)), as: UTF8.self)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// A store at `name` (may contain subdirectories) inside this directory.
    func store(_ name: String = "state/credentials.json", lockTimeout: Duration = .seconds(30)) -> CredentialStoreFile {
        CredentialStoreFile(
            location: StoreLocation(path: "\(path)/\(name)"), configuration: .init(lockTimeout: lockTimeout))
    }

    /// Names of the files in `directory` (relative to this one), sorted.
    func listing(_ directory: String = "state") throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: "\(path)/\(directory)").sorted()
    }
}

// MARK: - File helpers

/// The permission bits of `path`.
func permissions(of path: String) throws -> UInt32 {
    var info = stat()
    guard stat(path, &info) == 0 else { throw SystemError(call: "stat", errno: errno) }
    return UInt32(info.st_mode) & 0o7777
}

/// The inode of `path`.
func inode(of path: String) throws -> UInt64 {
    var info = stat()
    guard stat(path, &info) == 0 else { throw SystemError(call: "stat", errno: errno) }
    return UInt64(info.st_ino)
}

/// Writes `text` to `path` with `mode`, creating the directory (0700) first.
func writeFile(_ text: String, to path: String, mode: mode_t = 0o600) throws {
    let directory = (path as NSString).deletingLastPathComponent
    try FileManager.default.createDirectory(
        atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    guard chmod(path, mode) == 0 else { throw SystemError(call: "chmod", errno: errno) }
}

/// The bytes of `path`.
func contents(of path: String) throws -> Data {
    try Data(contentsOf: URL(fileURLWithPath: path))
}

/// An entry holding a counter.
func counterEntry(_ value: Int64) -> JSONObject { ["count": .integer(value)] }

/// Adds one to the counter entry under `key`.
func increment(_ snapshot: inout StoreSnapshot, key: String = "counter") {
    let current = snapshot.entry(for: key)?["count"]?.integerValue ?? 0
    snapshot.set(counterEntry(current + 1), for: key)
}

// MARK: - Processes

/// Starts `/bin/sh -c script` with `arguments` as `$1…`.
func startShell(_ script: String, _ arguments: String...) throws -> ChildProcess {
    let process = ChildProcess()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", script, "sh"] + arguments
    try process.run()
    return process
}

/// A shell script that takes the `flock` on `$1` through a descriptor of its own, creates `$2`, then runs
/// the rest. With `exec sleep`, the sleeping process itself holds the lock (so SIGKILL to it frees it).
func lockHolderScript(then rest: String) -> String {
    #"exec 9>>"$1" && flock -x 9 && : > "$2" && "# + rest
}

/// Waits until `path` exists (bounded).
func waitForFile(_ path: String, timeout: Duration = .seconds(10)) async throws {
    let deadline = ContinuousClock.now + timeout
    while !FileManager.default.fileExists(atPath: path) {
        guard ContinuousClock.now < deadline else {
            Issue.record("\(path) did not appear within \(timeout)")
            throw CancellationError()
        }
        try await Task.sleep(for: .milliseconds(10))
    }
}

/// Waits for `process` to exit without blocking a cooperative thread for long.
func waitForExit(_ process: ChildProcess, timeout: Duration = .seconds(60)) async throws {
    let deadline = ContinuousClock.now + timeout
    while process.isRunning {
        guard ContinuousClock.now < deadline else {
            kill(process.processIdentifier, SIGKILL)
            Issue.record("process \(process.processIdentifier) did not exit within \(timeout)")
            throw CancellationError()
        }
        try await Task.sleep(for: .milliseconds(10))
    }
}
