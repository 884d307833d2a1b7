import Foundation
import Glibc
import Testing
@testable import PortalAuthCore

/// The set-up scripts' shared helpers (scripts/lib.sh) on a fresh machine (issue 45): the package manager's lock held
/// by unattended upgrades is waited for, and a run that ends early stops the background builds it started.
@Suite("scripts/lib.sh: the package manager's lock, background builds")
struct ScriptLibraryTests {
    static let library = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appending(path: "../../../scripts/lib.sh").standardized.path

    /// Runs `script` with bash after sourcing lib.sh, with `bin` first on PATH; its status and standard error.
    static func run(_ script: String, bin: String) async throws -> (status: Int32, stderr: String) {
        let errors = bin + "/stderr"
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", "source \"$1\"\n" + script + "\n", "test-script", library]
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = bin + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        process.environment = environment
        process.standardError = FileHandle(forWritingAtPath: try Self.create(errors))
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let deadline = ContinuousClock.now + .seconds(60)
        while process.isRunning {
            guard ContinuousClock.now < deadline else {
                kill(process.processIdentifier, SIGKILL)
                throw TestFailure("the script did not end")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return (process.terminationStatus, try String(contentsOfFile: errors, encoding: .utf8))
    }

    /// A package manager in `bin`: a `dpkg-query` that finds no package installed, and an `apt-get` that runs
    /// `script` (a shell script's body).
    static func fakePackageManager(in bin: String, aptGet script: String) throws {
        _ = try create(bin + "/dpkg-query", "#!/bin/sh\nexit 1\n", executable: true)
        _ = try create(bin + "/apt-get", "#!/bin/sh\n" + script + "\n", executable: true)
    }

    static func create(_ path: String, _ text: String = "", executable: Bool = false) throws -> String {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, executable ? 0o755 : 0o644)
        return path
    }

    @Test(
        "ensure_debian_packages waits while another package manager holds the lock, says so once, then installs",
        .enabled(if: geteuid() == 0, "apt_get calls sudo when not root"))
    func waitsForTheLock() async throws {
        let temporary = try TemporaryDirectory()
        let bin = temporary.path
        // The package is missing; apt-get finds dpkg's lock taken twice (unattended upgrades), then installs.
        try Self.fakePackageManager(
            in: bin,
            aptGet: """
                echo "$*" >>"\(bin)/calls"
                count=$(wc -l <"\(bin)/calls")
                if [ "$count" -le 2 ]; then
                    echo "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4321 (unattended-upgr)" >&2
                    exit 100
                fi
                exit 0
                """)
        let result = try await Self.run(
            "APT_LOCK_POLL=0.05; ensure_debian_packages some-package", bin: bin)
        #expect(result.status == 0, "\(result.stderr)")
        let calls = try String(contentsOfFile: bin + "/calls", encoding: .utf8).split(separator: "\n")
        #expect(calls.count == 4, "two refused, then update and install: \(calls)")
        #expect(calls.last?.contains("install -y -q --no-install-recommends some-package") == true, "\(calls)")
        #expect(calls.allSatisfy { $0.contains("DPkg::Lock::Timeout=") }, "apt-get waits for dpkg's lock itself too")
        #expect(
            result.stderr.components(separatedBy: "waiting up to").count == 2,
            "the wait is told once: \(result.stderr)")
        #expect(result.stderr.contains("Could not get lock /var/lib/dpkg/lock-frontend"))
    }

    @Test(
        "a lock held past the wait fails naming what to do; another apt-get failure fails at once with its output",
        .enabled(if: geteuid() == 0, "apt_get calls sudo when not root"))
    func boundedWait() async throws {
        let temporary = try TemporaryDirectory()
        let bin = temporary.path
        try Self.fakePackageManager(
            in: bin,
            aptGet: """
                echo "E: Could not get lock /var/lib/apt/lists/lock. It is held by process 4321 (apt-get)" >&2
                exit 100
                """)
        let held = try await Self.run(
            "APT_LOCK_WAIT=1; APT_LOCK_POLL=0.2; ensure_debian_packages some-package", bin: bin)
        #expect(held.status == 100)
        #expect(held.stderr.contains("still held after 1 s"), "\(held.stderr)")
        #expect(held.stderr.contains("PORTAL_AUTH_APT_LOCK_WAIT"))

        try Self.fakePackageManager(in: bin, aptGet: "echo 'E: Unable to locate package some-package' >&2\nexit 100")
        let missing = try await Self.run("ensure_debian_packages some-package", bin: bin)
        #expect(missing.status == 100)
        #expect(missing.stderr.contains("Unable to locate package some-package"), "\(missing.stderr)")
        #expect(!missing.stderr.contains("waiting up to"))
    }

    @Test("a script that fails stops the background jobs it recorded and every process they started")
    func stopsBackgroundJobs() async throws {
        let temporary = try TemporaryDirectory()
        let pids = temporary.path + "/pids"
        // A background "build" that starts two "compilers", recorded as scripts/test records its builds; then a
        // step fails (set -e ends the script).
        let result = try await Self.run(
            """
            trap stop_background_jobs EXIT
            ( sleep 300 & sleep 300 & echo "$BASHPID" >"\(pids)"; wait ) &
            BACKGROUND_JOBS+=("$!")
            until [ "$(pgrep -P "$(cat "\(pids)" 2>/dev/null || echo 1)" | wc -l)" -ge 2 ]; do sleep 0.02; done
            pgrep -P "$(cat "\(pids)")" >>"\(pids)"
            false
            """, bin: temporary.path)
        #expect(result.status == 1)
        let started = try String(contentsOfFile: pids, encoding: .utf8).split(separator: "\n").compactMap { pid_t($0) }
        #expect(started.count == 3)
        #expect(result.stderr.contains("stopping the background work"), "\(result.stderr)")
        // Gone (or a zombie waiting for its reaper) soon after the script's end.
        let deadline = ContinuousClock.now + .seconds(30)
        var living = started
        while !living.isEmpty && ContinuousClock.now < deadline {
            living = started.filter(Self.isAlive)
            try await Task.sleep(for: .milliseconds(20))
        }
        for pid in living { kill(pid, SIGKILL) }
        #expect(living.isEmpty, "still running after the script ended: \(living)")
    }

    /// Whether `pid` runs (a zombie does not).
    static func isAlive(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        return !stat[stat.index(close, offsetBy: 2)...].hasPrefix("Z")
    }
}
