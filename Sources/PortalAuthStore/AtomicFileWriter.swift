package import Foundation
import Glibc
import PortalAuthCore

/// Replaces a file atomically: a reader sees the old bytes or the new bytes, never a mixture, and a crash
/// at any point leaves one of the two on disk.
///
/// Steps: a temporary file in the same directory (`.<name>.tmp-<pid>-<random>`, created `O_EXCL` with mode
/// 0600), all bytes written, `fsync`, `rename` over the target, `fsync` of the directory. The temporary file
/// is removed if any step before the rename fails.
package enum AtomicFileWriter {
    /// Writes `data` to `path` atomically with mode 0600.
    package static func write(_ data: Data, to path: String) throws(CredentialStoreError) {
        let directory = StoreFileSystem.parentDirectory(of: path)
        let temporary =
            "\(directory)/\(temporaryPrefix(for: path))\(getpid())-\(String(UInt64.random(in: 0...UInt64.max), radix: 16))"
        guard let descriptor = try StoreFileSystem.open(temporary, O_WRONLY | O_CREAT | O_EXCL, mode: 0o600) else {
            throw .fileSystem("create", temporary, SystemError(call: "open", errno: ENOENT))
        }
        var renamed = false
        defer { if !renamed { unlink(temporary) } }
        do {
            defer { close(descriptor) }
            do {
                // The umask cannot add bits, but make the mode exact whatever it is.
                try syscall("fchmod") { fchmod(descriptor, 0o600) }
            } catch {
                throw .fileSystem("set the mode of", temporary, error)
            }
            try StoreFileSystem.writeAll(descriptor, data, path: temporary)
            do {
                try syscall("fsync") { fsync(descriptor) }
            } catch {
                throw .fileSystem("flush", temporary, error)
            }
        }
        try StoreFileSystem.rename(temporary, to: path)
        renamed = true
        try StoreFileSystem.syncDirectory(directory)
    }

    /// Removes temporary files a killed writer left behind for `path`.
    ///
    /// Call only while holding the store's lock: every writer creates its temporary file under that lock,
    /// so any such file present then belongs to a writer that died.
    static func removeLeftovers(for path: String) {
        let directory = StoreFileSystem.parentDirectory(of: path)
        let prefix = temporaryPrefix(for: path)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names where name.hasPrefix(prefix) {
            unlink("\(directory)/\(name)")
        }
    }

    /// The name prefix of the temporary files for `path`.
    static func temporaryPrefix(for path: String) -> String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        return ".\(name).tmp-"
    }
}
