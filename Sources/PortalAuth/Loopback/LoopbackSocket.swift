import Glibc
import PortalAuthCore

/// The few socket calls the listener makes, each checked on the spot. Every descriptor is created
/// close-on-exec and nonblocking, so a browser started by the tool inherits none of them and no call can stall
/// the serving loop.
enum LoopbackSocket {
    /// A listening TCP socket on `address:port` (0 for an ephemeral port) with the port it got.
    /// `SO_REUSEADDR` lets a port in TIME_WAIT from an earlier run be bound again; never `SO_REUSEPORT`, which would
    /// let a second process share the port. `TCP_DEFER_ACCEPT` (`deferSeconds`): a connection is handed to the
    /// listener only once its first bytes have come (or after that long), so connections that never say anything
    /// wait in the kernel instead of taking places in the listener's table, and the browser's connection arrives
    /// with its request.
    static func listen(on address: LoopbackEndpoint.Address, port: Int, deferSeconds: Int32) throws(SystemError)
        -> (fd: Int32, port: Int)
    {
        let family = address == .ipv6Loopback ? AF_INET6 : AF_INET
        let fd = try syscall("socket") {
            socket(
                family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        }
        do throws(SystemError) {
            try setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1, "setsockopt(SO_REUSEADDR)")
            switch address {
            case .ipv4(let dotted):
                var socketAddress = sockaddr_in()
                socketAddress.sin_family = sa_family_t(AF_INET)
                socketAddress.sin_port = UInt16(port).bigEndian
                guard inet_pton(AF_INET, dotted, &socketAddress.sin_addr) == 1 else {
                    throw SystemError(call: "inet_pton", errno: EINVAL)
                }
                try bind(fd, &socketAddress)
            case .ipv6Loopback:
                // Only IPv6: the IPv4 side is a socket of its own.
                try setOption(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, 1, "setsockopt(IPV6_V6ONLY)")
                var socketAddress = sockaddr_in6()
                socketAddress.sin6_family = sa_family_t(AF_INET6)
                socketAddress.sin6_port = UInt16(port).bigEndian
                socketAddress.sin6_addr = in6addr_loopback
                try bind(fd, &socketAddress)
            }
            try setOption(
                fd, Int32(IPPROTO_TCP), Self.tcpDeferAccept, max(deferSeconds, 1), "setsockopt(TCP_DEFER_ACCEPT)")
            try syscall("listen") { Glibc.listen(fd, SOMAXCONN) }
            return (fd, try boundPort(fd))
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    /// Accepts one pending connection as a close-on-exec, nonblocking socket; nil when none is pending.
    static func accept(_ listener: Int32) throws(SystemError) -> Int32? {
        do throws(SystemError) {
            return try syscall("accept4") {
                acceptFlagged(listener, nil, nil, Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue))
            }
        } catch  where error.errno == EAGAIN || error.errno == EWOULDBLOCK {
            return nil
        }
    }

    private typealias Accept4 =
        @convention(c) (
            Int32, UnsafeMutablePointer<sockaddr>?, UnsafeMutablePointer<socklen_t>?, Int32
        ) -> Int32

    /// glibc's `accept4`, which Swift's Glibc module hides behind `_GNU_SOURCE`: looked up once by name, so that an
    /// accepted socket is close-on-exec from its first instant (`accept` + `fcntl` would leave a window in which a
    /// browser started by another thread inherits it). The listener's own C shim is not worth a system-library
    /// target for one function.
    private static let acceptFlagged: Accept4 = {
        guard let symbol = dlsym(nil, "accept4") else { fatalError("glibc without accept4 (Linux 2.6.28, glibc 2.10)") }
        return unsafeBitCast(symbol, to: Accept4.self)
    }()

    /// The local port a socket is bound to.
    static func boundPort(_ fd: Int32) throws(SystemError) -> Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = try withUnsafeMutablePointer(to: &storage) { (pointer) throws(SystemError) in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { (address) throws(SystemError) in
                try syscall("getsockname") { getsockname(fd, address, &length) }
            }
        }
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafeBytes(of: storage) { Int(UInt16(bigEndian: $0.load(as: sockaddr_in.self).sin_port)) }
        case AF_INET6:
            return withUnsafeBytes(of: storage) { Int(UInt16(bigEndian: $0.load(as: sockaddr_in6.self).sin6_port)) }
        default:
            throw SystemError(call: "getsockname", errno: EAFNOSUPPORT)
        }
    }

    /// A connected pair of local sockets whose first end wakes the serving loop when the second is written; both
    /// close-on-exec and nonblocking (`socketpair` takes the flags at creation, as `pipe2` would).
    static func makeWakePipe() throws(SystemError) -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        try syscall("socketpair") {
            socketpair(
                AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0,
                &ends)
        }
        return (ends[0], ends[1])
    }

    /// `TCP_DEFER_ACCEPT` from `<netinet/tcp.h>`, which Swift's Glibc module does not export.
    private static let tcpDeferAccept: Int32 = 9

    // MARK: - Helpers

    private static func setOption(
        _ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32, _ call: String
    ) throws(SystemError) {
        var value = value
        try syscall(call) { setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) }
    }

    private static func bind<Address>(_ fd: Int32, _ address: inout Address) throws(SystemError) {
        _ = try withUnsafePointer(to: &address) { (pointer) throws(SystemError) in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { (generic) throws(SystemError) in
                try syscall("bind") { Glibc.bind(fd, generic, socklen_t(MemoryLayout<Address>.size)) }
            }
        }
    }
}
