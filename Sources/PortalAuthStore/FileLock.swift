import Foundation
import Glibc
import PortalAuthCore

/// An exclusive `flock(2)` on a lock file, held until ``release()`` (or until the object goes away).
///
/// - The lock belongs to the open file description, so two tasks of one process exclude each other just as
///   two processes do, and the kernel releases it when its holder exits, however it exits (SIGKILL included):
///   a lock can never be left stuck by a dead process.
/// - The lock file is created 0600 with `O_CLOEXEC` (a child process must not inherit, and so keep, the lock)
///   and is never deleted by the tool. Somebody else may delete or replace it all the same (a clean-up script,
///   `rm`): the lock stays correct then, because
///   - after taking the `flock` the path is checked to still name the locked file (`fstat` against `lstat`);
///     a waiter that locked a removed or replaced file lets it go and locks the file the path names now; and
///   - the holder also locks the store's directory, which cannot be removed while the store is in it and does
///     not change when files in it are removed or replaced, so a process that finds the lock file gone and
///     creates a new one still waits for a holder of the old one.
///   The lock file comes first and the directory second, always in this order, so two lockers cannot deadlock.
/// - Waiting never blocks a thread: it polls with `LOCK_EX | LOCK_NB` and sleeps between attempts
///   (`Task.sleep`, growing from 2 ms to the configured maximum), up to the timeout.
/// - The holder writes its process ID into the file, so that a timed-out waiter can say who holds the lock.
final class FileLock {
    /// The lock file.
    let path: String
    private var descriptor: Int32
    /// The store directory, locked after the lock file; -1 until then.
    private var directoryDescriptor: Int32 = -1
    /// True once the lock is taken; only a holder may clear the recorded holder.
    private var isHeld = false

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit { release() }

    // MARK: - Acquiring

    /// Takes the lock on `path`, creating the file (0600) when missing, and on the directory that holds it.
    ///
    /// - Throws: `lockTimeout` naming the holder when known, `cancelled` when the task is cancelled while
    ///   waiting, or a file-system / permission error about the lock file or its directory.
    static func acquire(path: String, timeout: Duration, maximumPause: Duration) async throws(CredentialStoreError)
        -> FileLock
    {
        var waiting = Waiting(timeout: timeout, maximumPause: maximumPause)
        var lock = try open(path)
        while true {
            while try !lock.tryLock(lock.descriptor) {
                try await waiting.pause(path: path) { lock.describeHolder(of: lock.descriptor) }
            }
            if try lock.isStillNamedByPath() { break }
            // Removed or replaced while this process waited or locked: a lock on a file that the path no
            // longer names excludes nobody. Let it go and lock the file that is there now.
            lock.release()
            lock = try open(path)
            try waiting.checkDeadline(path: path) { nil }
        }
        let directory = StoreFileSystem.parentDirectory(of: path)
        guard let directoryDescriptor = try StoreFileSystem.open(directory, O_RDONLY | O_DIRECTORY) else {
            throw .fileSystem("open", directory, SystemError(call: "open", errno: ENOENT))
        }
        lock.directoryDescriptor = directoryDescriptor
        while try !lock.tryLock(directoryDescriptor) {
            try await waiting.pause(path: path) { lock.describeHolder(of: directoryDescriptor) }
        }
        lock.isHeld = true
        lock.recordHolder()
        return lock
    }

    /// Opens (creating when missing) and checks the lock file; the descriptor is owned by the result.
    private static func open(_ path: String) throws(CredentialStoreError) -> FileLock {
        guard let descriptor = try StoreFileSystem.open(path, O_RDWR | O_CREAT, mode: 0o600) else {
            throw .fileSystem("create", path, SystemError(call: "open", errno: ENOENT))
        }
        // From here the descriptor is owned by `lock`, closed by its deinit on every exit.
        let lock = FileLock(path: path, descriptor: descriptor)
        try StoreFileSystem.checkPrivateFile(
            StoreFileSystem.status(ofDescriptor: descriptor, path: path), path: path, privateMode: false)
        return lock
    }

    /// True when `path` still names the file this lock has open (same device and inode).
    private func isStillNamedByPath() throws(CredentialStoreError) -> Bool {
        let open = try StoreFileSystem.status(ofDescriptor: descriptor, path: path)
        guard let named = try StoreFileSystem.status(of: path, followingLinks: false) else { return false }
        return named.st_dev == open.st_dev && named.st_ino == open.st_ino
    }

    /// One non-blocking attempt on `descriptor`; false when another open file description holds the lock.
    private func tryLock(_ descriptor: Int32) throws(CredentialStoreError) -> Bool {
        do {
            try syscall("flock") { flock(descriptor, LOCK_EX | LOCK_NB) }
            return true
        } catch {
            if error.errno == EWOULDBLOCK { return false }
            throw .fileSystem(
                "lock", descriptor == self.descriptor ? path : StoreFileSystem.parentDirectory(of: path), error)
        }
    }

    /// The pauses between attempts (2 ms, doubling up to the maximum) and the deadline they share.
    private struct Waiting {
        let timeout: Duration
        let maximumPause: Duration
        let clock = ContinuousClock()
        let deadline: ContinuousClock.Instant
        var pause = Duration.milliseconds(2)

        init(timeout: Duration, maximumPause: Duration) {
            self.timeout = timeout
            self.maximumPause = maximumPause
            self.deadline = clock.now + timeout
        }

        /// Throws `lockTimeout` (naming the holder `describe` finds) once the deadline has passed.
        func checkDeadline(path: String, describe: () -> String?) throws(CredentialStoreError) {
            if clock.now >= deadline { throw .lockTimeout(path, after: timeout, holder: describe()) }
        }

        /// Sleeps before the next attempt, or throws `lockTimeout` or `cancelled`.
        mutating func pause(path: String, describe: () -> String?) async throws(CredentialStoreError) {
            try checkDeadline(path: path, describe: describe)
            do {
                try await Task.sleep(for: min(pause, deadline - clock.now))
            } catch {
                throw .cancelled(path)
            }
            pause = min(pause * 2, maximumPause)
        }
    }

    // MARK: - Releasing

    /// Clears the recorded holder and releases the lock (closing the descriptor releases the `flock`).
    /// Calling it again does nothing.
    func release() {
        guard descriptor >= 0 else { return }
        if isHeld { _ = ftruncate(descriptor, 0) }
        if directoryDescriptor >= 0 { close(directoryDescriptor) }
        close(descriptor)
        directoryDescriptor = -1
        descriptor = -1
        isHeld = false
    }

    // MARK: - Holder

    /// Writes this process's ID into the lock file (best effort: it only improves a timeout message).
    private func recordHolder() {
        let text = Array("\(getpid())\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = text.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
    }

    /// "process 1234 (portal-auth)" for the process holding the lock, or nil when it cannot be told.
    ///
    /// `/proc/locks` is asked first (it knows holders that do not write their ID, such as `flock(1)`), then
    /// the ID the holder wrote into the file.
    private func describeHolder(of locked: Int32) -> String? {
        guard let info = try? StoreFileSystem.status(ofDescriptor: locked, path: path) else { return nil }
        let pid = Self.flockHolder(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)) ?? recordedHolder()
        guard let pid, pid > 0, kill(pid, 0) == 0 || errno == EPERM else { return nil }
        let name = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return name.map { "process \(pid) (\($0))" } ?? "process \(pid)"
    }

    /// The process ID the holder wrote into the lock file.
    private func recordedHolder() -> pid_t? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return pid_t(String(decoding: buffer[0..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// The process holding a `flock` on the file with this device and inode, from `/proc/locks`.
    ///
    /// Lines look like `3: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF`; waiting requests (`->`) are skipped.
    static func flockHolder(device: UInt64, inode: UInt64, locks: String? = nil) -> pid_t? {
        guard let table = locks ?? (try? String(contentsOfFile: "/proc/locks", encoding: .utf8)) else { return nil }
        let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~0xfff)
        let minor = (device & 0xff) | ((device >> 12) & ~0xff)
        let wanted = String(format: "%02llx:%02llx:%llu", major, minor, inode)
        for line in table.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[1] == "FLOCK", fields[5] == wanted else { continue }
            return pid_t(fields[4])
        }
        return nil
    }
}
