import Foundation
import Glibc

/// An exclusive `flock(2)` on a lock file, held until ``release()`` (or until the object goes away).
///
/// - The lock belongs to the open file description, so two tasks of one process exclude each other just as
///   two processes do, and the kernel releases it when its holder exits, however it exits (SIGKILL included):
///   a lock can never be left stuck by a dead process.
/// - The lock file is created 0600 with `O_CLOEXEC` (a child process must not inherit, and so keep, the lock)
///   and is never deleted: a process waiting on the old inode would otherwise lock a file nobody else uses.
/// - Waiting never blocks a thread: it polls with `LOCK_EX | LOCK_NB` and sleeps between attempts
///   (`Task.sleep`, growing from 2 ms to the configured maximum), up to the timeout.
/// - The holder writes its process ID into the file, so that a timed-out waiter can say who holds the lock.
final class FileLock {
    /// The lock file.
    let path: String
    private var descriptor: Int32
    /// True once the lock is taken; only a holder may clear the recorded holder.
    private var isHeld = false

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit { release() }

    // MARK: - Acquiring

    /// Takes the lock on `path`, creating the file (0600) when missing.
    ///
    /// - Throws: `lockTimeout` naming the holder when known, `cancelled` when the task is cancelled while
    ///   waiting, or a file-system / permission error about the lock file.
    static func acquire(path: String, timeout: Duration, maximumPause: Duration) async throws(CredentialStoreError) -> FileLock {
        guard let descriptor = try StoreFileSystem.open(path, O_RDWR | O_CREAT, mode: 0o600) else {
            throw .fileSystem("create", path, SystemError(call: "open", errno: ENOENT))
        }
        // From here the descriptor is owned by `lock`, closed by its deinit on every exit.
        let lock = FileLock(path: path, descriptor: descriptor)
        try StoreFileSystem.checkPrivateFile(
            StoreFileSystem.status(ofDescriptor: descriptor, path: path), path: path, privateMode: false)

        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var pause = Duration.milliseconds(2)
        while try !lock.tryLock() {
            let now = clock.now
            if now >= deadline {
                throw .lockTimeout(path, after: timeout, holder: lock.describeHolder())
            }
            do {
                try await Task.sleep(for: min(pause, deadline - now))
            } catch {
                throw .cancelled(path)
            }
            pause = min(pause * 2, maximumPause)
        }
        lock.isHeld = true
        lock.recordHolder()
        return lock
    }

    /// One non-blocking attempt; false when another open file description holds the lock.
    private func tryLock() throws(CredentialStoreError) -> Bool {
        do {
            try syscall("flock") { flock(descriptor, LOCK_EX | LOCK_NB) }
            return true
        } catch {
            if error.errno == EWOULDBLOCK { return false }
            throw .fileSystem("lock", path, error)
        }
    }

    // MARK: - Releasing

    /// Clears the recorded holder and releases the lock (closing the descriptor releases the `flock`).
    /// Calling it again does nothing.
    func release() {
        guard descriptor >= 0 else { return }
        if isHeld { _ = ftruncate(descriptor, 0) }
        close(descriptor)
        descriptor = -1
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
    private func describeHolder() -> String? {
        guard let info = try? StoreFileSystem.status(ofDescriptor: descriptor, path: path) else { return nil }
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
