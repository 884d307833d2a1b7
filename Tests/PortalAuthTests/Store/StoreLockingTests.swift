import Foundation
import Glibc
import Testing
@testable import PortalAuth
@testable import PortalAuthCore
@testable import PortalAuthStore

@Suite("Credential store locking across tasks and processes")
struct StoreLockingTests {
    // MARK: - No lost updates

    @Test("20 concurrent updates from tasks of one process all count")
    func concurrentTasks() async throws {
        let temporary = try TemporaryDirectory()
        let store = temporary.store()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<20 {
                group.addTask { try await store.update { increment(&$0) } }
            }
            try await group.waitForAll()
        }
        #expect(try store.read().entry(for: "counter") == counterEntry(20))
    }

    @Test("updates from 4 child processes and 10 local tasks at once all count")
    func concurrentProcesses() async throws {
        let temporary = try TemporaryDirectory()
        let store = temporary.store()
        let children = try (0..<4).map { index in
            try StoreChildProcess.start(store: store.path, increments: 5, log: "\(temporary.path)/child-\(index).log")
        }
        defer { for child in children where child.isRunning { kill(child.processIdentifier, SIGKILL) } }

        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<10 {
                group.addTask { try await store.update { increment(&$0) } }
            }
            try await group.waitForAll()
        }
        for (index, child) in children.enumerated() {
            try await waitForExit(child)
            let log = (try? String(contentsOfFile: "\(temporary.path)/child-\(index).log", encoding: .utf8)) ?? ""
            #expect(child.terminationStatus == 0, "child \(index) failed:\n\(log)")
        }
        #expect(try store.read().entry(for: "counter") == counterEntry(30))
    }

    // MARK: - Waiting, timeouts, dead holders

    @Test("an update waits for another process's flock and runs after it is released")
    func waitsForHolder() async throws {
        let temporary = try TemporaryDirectory()
        let store = temporary.store()
        try await store.update { increment(&$0) }
        let ready = "\(temporary.path)/ready", finished = "\(temporary.path)/finished"
        let holder = try startShell(
            lockHolderScript(then: #"sleep 0.5 && : > "$3""#), store.location.lockPath, ready, finished)
        defer { if holder.isRunning { kill(holder.processIdentifier, SIGKILL) } }
        try await waitForFile(ready)

        try await store.update { snapshot in
            #expect(
                FileManager.default.fileExists(atPath: finished), "the body ran while another process held the lock")
            increment(&snapshot)
        }
        try await waitForExit(holder)
        #expect(holder.terminationStatus == 0)
        #expect(try store.read().entry(for: "counter") == counterEntry(2))
    }

    @Test(
        "a lock held too long times out naming the lock file and its holder; SIGKILL of the holder mid-update frees it")
    func killedHolderReleasesLock() async throws {
        let temporary = try TemporaryDirectory()
        let store = temporary.store(lockTimeout: .milliseconds(300))
        try await store.update { increment(&$0) }
        let ready = "\(temporary.path)/ready"
        // Another process of ours, stopped inside its update after changing the snapshot, before writing it.
        let holder = try StoreChildProcess.start(
            store: store.path, holdingLockUntilKilled: ready, log: "\(temporary.path)/holder.log")
        defer { if holder.isRunning { kill(holder.processIdentifier, SIGKILL) } }
        try await waitForFile(ready)

        await #expect {
            try await store.update { increment(&$0) }
        } throws: { error in
            guard let error = error as? CredentialStoreError else { return false }
            return error.kind == .lockTimeout && error.category == .timedOut && error.path == store.location.lockPath
                && error.description.contains(store.location.lockPath)
                && error.description.contains("process \(holder.processIdentifier)")
        }
        #expect(holder.isRunning, "the timeout came while the lock was still held, not after the holder ended")

        try await expectSIGKILLReleasesLock(holder, store: store)
        #expect(
            try temporary.listing() == ["credentials.json", "credentials.json.lock"], "the lock file is never deleted")
    }

    @Test("a flock(1) holder killed with SIGKILL releases the lock at once")
    func killedFlockHolder() async throws {
        let temporary = try TemporaryDirectory()
        let store = temporary.store(lockTimeout: .milliseconds(200))
        try await store.update { increment(&$0) }
        let ready = "\(temporary.path)/ready"
        // `exec sleep`: the sleeping process is the one holding the lock (through the shell's descriptor 9).
        let holder = try startShell(lockHolderScript(then: "exec sleep 60"), store.location.lockPath, ready)
        defer { if holder.isRunning { kill(holder.processIdentifier, SIGKILL) } }
        try await waitForFile(ready)
        await #expect {
            try await store.update { increment(&$0) }
        } throws: { error in
            (error as? CredentialStoreError)?.kind == .lockTimeout
        }

        try await expectSIGKILLReleasesLock(holder, store: store)
    }

    /// Kills `holder` (which holds the lock; the store's counter is 1) with SIGKILL, then checks that an update
    /// gets the lock at once and that the killed holder's unwritten change left the store as it was.
    private func expectSIGKILLReleasesLock(_ holder: ChildProcess, store: CredentialStoreFile) async throws {
        #expect(kill(holder.processIdentifier, SIGKILL) == 0)
        try await waitForExit(holder)
        #expect(holder.terminationReason == .uncaughtSignal)

        var patient = store
        patient.configuration.lockTimeout = .seconds(10)
        // Had the killed holder's lock outlived it, this update would fail with a lock timeout.
        try await patient.update { increment(&$0) }
        #expect(try store.read().entry(for: "counter") == counterEntry(2), "no entry lost, nothing half-written")
    }

    @Test("cancelling a task that waits for the lock ends the wait with a cancelled error")
    func cancelWhileWaiting() async throws {
        let temporary = try TemporaryDirectory()
        let store = temporary.store()
        try await store.update { increment(&$0) }
        let ready = "\(temporary.path)/ready"
        let holder = try startShell(lockHolderScript(then: "exec sleep 60"), store.location.lockPath, ready)
        defer { kill(holder.processIdentifier, SIGKILL) }
        try await waitForFile(ready)

        let waiter = Task { try await store.update { increment(&$0) } }
        try await Task.sleep(for: .milliseconds(100))
        waiter.cancel()
        await #expect {
            try await waiter.value
        } throws: { error in
            let error = error as? CredentialStoreError
            return error?.kind == .cancelled && error?.category == .cancelled
        }
        #expect(try store.read().entry(for: "counter") == counterEntry(1))
    }

    // MARK: - Holder identification

    @Test("the holder's process ID is in the lock file while it holds the lock, and cleared afterwards")
    func recordsHolder() async throws {
        let temporary = try TemporaryDirectory()
        let store = temporary.store()
        let during = try await store.update { _ in
            String(decoding: try contents(of: store.location.lockPath), as: UTF8.self)
        }
        #expect(during == "\(getpid())\n")
        #expect(try contents(of: store.location.lockPath).isEmpty)
    }

    @Test("holders are found in /proc/locks by device and inode; waiting requests are skipped")
    func parsesProcLocks() {
        let table = """
            1: POSIX  ADVISORY  WRITE 77 fd:01:5678 0 EOF
            2: FLOCK  ADVISORY  WRITE 4321 fd:01:5678 0 EOF
            2: -> FLOCK  ADVISORY  WRITE 999 fd:01:5678 0 EOF
            3: FLOCK  ADVISORY  WRITE 55 fd:01:9999 0 EOF
            """
        // Device 0xfd01 is major 0xfd, minor 0x01 in the kernel's encoding.
        #expect(FileLock.flockHolder(device: 0xfd01, inode: 5678, locks: table) == 4321)
        #expect(FileLock.flockHolder(device: 0xfd01, inode: 1234, locks: table) == nil)
    }
}

// MARK: - Child process helper

/// Runs store updates in a separate process: this test binary started again, running only one test of
/// this suite.
///
/// Each test is disabled unless the spawning test sets its environment variable, so in a normal run they are
/// skipped; in the child, a failure makes the process exit non-zero, which the parent checks.
@Suite("Store child process helper (runs only when spawned)")
struct StoreChildProcess {
    static let storeVariable = "PORTAL_AUTH_TEST_CHILD_STORE"
    static let incrementsVariable = "PORTAL_AUTH_TEST_CHILD_INCREMENTS"
    static let holdVariable = "PORTAL_AUTH_TEST_CHILD_HOLD_READY"

    @Test("increments the counter entry", .enabled(if: ProcessInfo.processInfo.environment[incrementsVariable] != nil))
    func incrementCounter() async throws {
        let environment = ProcessInfo.processInfo.environment
        let store = CredentialStoreFile(location: StoreLocation(path: try #require(environment[Self.storeVariable])))
        let increments = try #require(Int(environment[Self.incrementsVariable] ?? ""))
        for _ in 0..<increments {
            try await store.update { increment(&$0) }
        }
    }

    @Test(
        "holds the lock mid-update until killed", .enabled(if: ProcessInfo.processInfo.environment[holdVariable] != nil)
    )
    func holdLock() async throws {
        let environment = ProcessInfo.processInfo.environment
        let store = CredentialStoreFile(location: StoreLocation(path: try #require(environment[Self.storeVariable])))
        let ready = try #require(environment[Self.holdVariable])
        try await store.withExclusiveAccess { snapshot in
            increment(&snapshot)
            _ = FileManager.default.createFile(atPath: ready, contents: nil)
            try await Task.sleep(for: .seconds(60))
        }
        Issue.record("the helper was meant to be killed while holding the lock")
    }

    /// Starts this test binary running ``incrementCounter()`` against `store`.
    static func start(store: String, increments: Int, log: String) throws -> ChildProcess {
        try start(
            test: "incrementCounter", variables: [storeVariable: store, incrementsVariable: String(increments)],
            log: log)
    }

    /// Starts this test binary running ``holdLock()`` against `store`; `ready` appears once it holds the lock.
    static func start(store: String, holdingLockUntilKilled ready: String, log: String) throws -> ChildProcess {
        try start(test: "holdLock", variables: [storeVariable: store, holdVariable: ready], log: log)
    }

    private static func start(test: String, variables: [String: String], log: String) throws -> ChildProcess {
        let process = ChildProcess()
        process.executableURL = URL(
            fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        process.arguments = ["--testing-library", "swift-testing", "--filter", "StoreChildProcess.\(test)"]
        process.environment = ProcessInfo.processInfo.environment.merging(variables) { $1 }
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let output = FileHandle(forWritingAtPath: log)
        process.standardOutput = output
        process.standardError = output
        try process.run()
        return process
    }
}
