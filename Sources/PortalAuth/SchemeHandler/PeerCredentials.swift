import Glibc
import PortalAuthCore

/// The process at the other end of a Unix socket, as the kernel recorded it (`SO_PEERCRED`): it cannot be
/// claimed by the peer, so the channel trusts only this to decide who is talking.
struct PeerCredentials: Sendable, Equatable {
    /// The peer's process ID.
    let pid: Int32
    /// The peer's user ID.
    let uid: UInt32
    /// The peer's group ID.
    let gid: UInt32

    /// Reads the peer of a connected Unix socket.
    ///
    /// `struct ucred` sits behind `_GNU_SOURCE` in glibc's headers, out of Swift's reach: three 32-bit fields
    /// (pid, uid, gid) in that order on every Linux architecture, read here as such.
    static func of(_ fd: Int32) throws(SystemError) -> PeerCredentials {
        var fields: (Int32, UInt32, UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout<(Int32, UInt32, UInt32)>.size)
        try syscall("getsockopt(SO_PEERCRED)") { getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &fields, &length) }
        guard Int(length) == MemoryLayout<(Int32, UInt32, UInt32)>.size else {
            throw SystemError(call: "getsockopt(SO_PEERCRED)", errno: EINVAL)
        }
        return PeerCredentials(pid: fields.0, uid: fields.1, gid: fields.2)
    }
}
