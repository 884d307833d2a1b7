import Foundation
import Glibc
import PortalAuthCore

/// Disk space set aside for the next atomic write of a file, taken before an operation whose result must not
/// be lost for want of space — a token refresh: with a rotating provider the old refresh token is dead once
/// sent, so the new one has to fit on disk before the request leaves.
///
/// The space is a temporary file of `AtomicFileWriter`'s kind (`.<name>.tmp-<pid>-<random>`, 0600, in the same
/// directory) whose blocks `posix_fallocate` allocates. ``commit(_:)`` writes the new bytes into those blocks,
/// cuts the file to their length, flushes it and renames it over the target, as `AtomicFileWriter` does; if the
/// reservation is dropped without a commit, the file is removed.
///
/// Limits: copy-on-write file systems (btrfs, ZFS) may still need new blocks when the reserved ones are
/// written, and a document larger than the reservation needs more space.
///
/// `@unchecked Sendable`: one update holds it at a time, handing it from the pool thread that reserves the space to
/// the one that commits it (`CredentialStoreFile.exclusiveAccess`, which awaits each step): never used concurrently.
final class SpaceReservation: @unchecked Sendable {
    /// The file the reservation is for.
    let path: String
    /// The temporary file holding the space.
    let temporary: String
    /// How many bytes were reserved.
    let bytes: Int
    private var descriptor: Int32
    private var committed = false

    /// Reserves `bytes` for the next write of `path`.
    ///
    /// - Throws: `fileSystem` ("reserve space …") when the file system has no room (`ENOSPC`, `EDQUOT`) or the
    ///   temporary file cannot be made; nothing is left behind then.
    init(bytes: Int, for path: String) throws(CredentialStoreError) {
        let directory = StoreFileSystem.parentDirectory(of: path)
        let temporary =
            "\(directory)/\(AtomicFileWriter.temporaryPrefix(for: path))\(getpid())-\(String(UInt64.random(in: 0...UInt64.max), radix: 16))"
        guard let descriptor = try StoreFileSystem.open(temporary, O_WRONLY | O_CREAT | O_EXCL, mode: 0o600) else {
            throw .fileSystem("create", temporary, SystemError(call: "open", errno: ENOENT))
        }
        self.path = path
        self.temporary = temporary
        self.bytes = bytes
        self.descriptor = descriptor
        // From here `deinit` closes and removes the file on every exit.
        do {
            try syscall("fchmod") { fchmod(descriptor, 0o600) }
        } catch {
            throw .fileSystem("set the mode of", temporary, error)
        }
        // posix_fallocate returns the error number instead of setting errno; glibc writes zeros itself where
        // the file system has no fallocate.
        let result = posix_fallocate(descriptor, 0, off_t(bytes))
        if result != 0 {
            throw .fileSystem(
                "reserve \(bytes) bytes (before refreshing, so nothing was sent) for", path,
                SystemError(call: "posix_fallocate", errno: result))
        }
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
        if !committed { unlink(temporary) }
    }

    /// Replaces `path` with `data` atomically, in the reserved space.
    func commit(_ data: Data) throws(CredentialStoreError) {
        precondition(!committed && descriptor >= 0, "a space reservation is committed once")
        try StoreFileSystem.writeAll(descriptor, data, path: temporary)
        do {
            try syscall("ftruncate") { ftruncate(descriptor, off_t(data.count)) }
            try syscall("fsync") { fsync(descriptor) }
        } catch {
            throw .fileSystem("flush", temporary, error)
        }
        close(descriptor)
        descriptor = -1
        try StoreFileSystem.rename(temporary, to: path)
        committed = true
        try StoreFileSystem.syncDirectory(StoreFileSystem.parentDirectory(of: path))
    }
}
