import Glibc
import PortalAuthCore

/// A `sockaddr_un` for a path, refusing paths the 108-byte field cannot hold.
struct UnixSocketAddress {
    private var storage = sockaddr_un()

    /// The address of `path`; `ENAMETOOLONG` when it does not fit.
    init(path: String) throws(SystemError) {
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: storage.sun_path)
        guard !bytes.isEmpty, bytes.count < capacity, !bytes.contains(0) else {
            throw SystemError(call: "sockaddr_un", errno: ENAMETOOLONG)
        }
        storage.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &storage.sun_path) { field in
            for (index, byte) in bytes.enumerated() { field[index] = byte }
            field[bytes.count] = 0
        }
    }

    /// Calls `body` with the address as a `sockaddr` pointer and its length.
    mutating func withPointer<T>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws(SystemError) -> T)
        throws(SystemError) -> T
    {
        try withUnsafePointer(to: &storage) { (pointer) throws(SystemError) -> T in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { (generic) throws(SystemError) -> T in
                try body(generic, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
    }
}
