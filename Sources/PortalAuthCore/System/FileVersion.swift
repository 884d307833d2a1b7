import Glibc

/// What tells one version of a file from another: the file it is (device, inode), its size, and when it was last
/// written and when its status last changed (modification and change times, to the nanosecond). A file replaced by a
/// rename is another inode; one rewritten in place has new times, even with the same size and contents; one whose
/// modification time was set back still has a new change time.
package struct FileVersion: Sendable, Equatable {
    package let device: UInt64
    package let inode: UInt64
    package let size: Int64
    package let modifiedSeconds: Int
    package let modifiedNanoseconds: Int
    package let changedSeconds: Int
    package let changedNanoseconds: Int

    /// The file at `path` as it is now; nil when there is none (or it cannot be looked at).
    package init?(path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
        size = Int64(status.st_size)
        modifiedSeconds = status.st_mtim.tv_sec
        modifiedNanoseconds = status.st_mtim.tv_nsec
        changedSeconds = status.st_ctim.tv_sec
        changedNanoseconds = status.st_ctim.tv_nsec
    }
}
