import Foundation
import Glibc
import Testing
@testable import PortalAuth
@testable import PortalAuthStore

/// The store's lock when its lock file is removed or replaced by somebody else (a clean-up script, `rm`):
/// two updaters must still never run at once, or two refreshes would send the same rotating refresh token.
@Suite("Credential store lock when the lock file is removed or replaced")
struct StoreLockFileRemovalTests {
    /// Removes the lock file, or renames a new file over it.
    static func disturb(_ lockPath: String, how: String) throws {
        if how == "removed" {
            #expect(unlink(lockPath) == 0)
        } else {
            try writeFile("", to: lockPath + ".new")
            #expect(rename(lockPath + ".new", lockPath) == 0)
        }
    }

    @Test(
        "while one update holds the lock and its file goes, a second updater still waits (and times out)",
        arguments: ["removed", "replaced"])
    func holderKeepsTheLock(how: String) async throws {
        let temporary = try TemporaryDirectory()
        let store = temporary.store()
        let impatient = temporary.store(lockTimeout: .milliseconds(300))
        try await store.withExclusiveAccess { snapshot in
            try Self.disturb(store.location.lockPath, how: how)
            // Another updater now finds no lock file (or a fresh one) and creates or opens it: it must not get in.
            let error = await #expect(throws: CredentialStoreError.self) {
                try await impatient.update { increment(&$0) }
            }
            #expect(error?.kind == .lockTimeout, "the second updater got the lock while the first held it (\(how))")
            increment(&snapshot)
        }
        #expect(try store.read().entry(for: "counter") == counterEntry(1))
        // Nothing is left stuck: the next update runs at once.
        try await impatient.update { increment(&$0) }
        #expect(try store.read().entry(for: "counter") == counterEntry(2))
    }

    @Test(
        "a waiter that locked a lock file which was replaced meanwhile locks the file the path names now",
        arguments: ["removed", "replaced"])
    func waiterFollowsThePath(how: String) async throws {
        let temporary = try TemporaryDirectory()
        let store = temporary.store(lockTimeout: .seconds(4))
        try await store.update { increment(&$0) }
        let lockPath = store.location.lockPath
        let firstReady = "\(temporary.path)/first-ready", secondReady = "\(temporary.path)/second-ready"
        // The first holder keeps the original lock file until this test kills it.
        let first = try startShell(lockHolderScript(then: "exec sleep 60"), lockPath, firstReady)
        defer { if first.isRunning { kill(first.processIdentifier, SIGKILL) } }
        try await waitForFile(firstReady)

        // A waiter opens the original file and waits for it.
        let waiter = Task { try await store.update { increment(&$0) } }
        try await waitUntilOpen(lockPath)

        // The file is replaced; a second holder locks the file now at the path, then the first lets go.
        try Self.disturb(lockPath, how: how)
        let second = try startShell(lockHolderScript(then: "exec sleep 60"), lockPath, secondReady)
        defer { if second.isRunning { kill(second.processIdentifier, SIGKILL) } }
        try await waitForFile(secondReady)
        kill(first.processIdentifier, SIGKILL)

        // The waiter got the original file's lock, but that file is not the lock any more: it waits for the
        // second holder instead of updating beside it.
        let result = await waiter.result
        #expect(throws: CredentialStoreError.self, "the waiter updated while the second holder held the lock") {
            try result.get()
        }
        #expect(try store.read().entry(for: "counter") == counterEntry(1))
    }

    /// Issue 43 item 6, the race itself: A holds the lock (as a refresh does while the provider answers), the lock file
    /// is removed, B creates a new file at the same path and locks it; B must still wait for A, and run after it on
    /// what A wrote (two refreshes with one refresh token otherwise). A and B are two stores, so two open file
    /// descriptions, as two processes have; with the file and with the keyring backend.
    @Test(
        "the lock file removed while A holds the lock: B creates and locks a new one, and still waits for A",
        arguments: ["file", "keyring"])
    func removedWhileHeldSecondWaits(backend: String) async throws {
        let temporary = try TemporaryDirectory()
        let storage = InMemorySecretStorage()
        func store() -> CredentialStoreFile {
            var store = temporary.store(lockTimeout: .seconds(60))
            if backend == "keyring" {
                store.secretStorage = storage
                store.backend = .keyring
            }
            return store
        }
        let a = store(), b = store()
        let lockPath = a.location.lockPath
        let order = LogLines()
        try await a.update { increment(&$0) }
        let originalLock = try inode(of: lockPath)
        let second = try await a.withExclusiveAccess { snapshot -> Task<Void, any Error> in
            #expect(unlink(lockPath) == 0)
            let second = Task {
                try await b.update { snapshot in
                    order.append("B read \(snapshot.entry(for: "counter")?["count"]?.integerValue ?? 0)")
                    increment(&snapshot)
                }
            }
            // B has created and locked a new lock file at the same path...
            try await Self.waitUntilLocked(lockPath, other: originalLock)
            // ...and is inside its update unless the lock holds: give it the chance it would take.
            for _ in 0..<100 where order.text.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
            order.append("A done")
            increment(&snapshot)
            return second
        }
        try await second.value
        #expect(order.text == "A done\nB read 2", "B ran beside A (\(backend))")
        #expect(try a.read().entry(for: "counter")?["count"]?.integerValue == 3, "both updates count (\(backend))")
    }

    /// Waits until a file other than inode `other` is at `path` and a process holds its `flock` (bounded).
    private static func waitUntilLocked(_ path: String, other: UInt64) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            var info = stat()
            if lstat(path, &info) == 0, UInt64(info.st_ino) != other,
                FileLock.flockHolder(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)) != nil
            {
                return
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        Issue.record("no new lock file was locked at \(path)")
        throw CancellationError()
    }

    /// Waits until this process has `path` open (the waiter's descriptor), bounded.
    private func waitUntilOpen(_ path: String) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            if names.contains(where: {
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == path
            }) {
                return
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        Issue.record("the waiter never opened \(path)")
        throw CancellationError()
    }
}
