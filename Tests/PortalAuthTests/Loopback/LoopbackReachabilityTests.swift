import Foundation
import Glibc
import Testing
@testable import PortalAuth
@testable import PortalAuthCore

/// Only this machine can reach the listener: its sockets are bound to loopback addresses, never a wildcard, and a
/// connection from another host to the machine's own address on the listener's port is refused.
@Suite("Loopback listener reachability", .timeLimit(.minutes(1)))
struct LoopbackReachabilityTests {
    // MARK: - Bound addresses

    @Test(
        "every listening socket is bound to 127.0.0.1 or ::1 (getsockname), never to a wildcard address",
        arguments: [
            ("http://127.0.0.1/callback", ["127.0.0.1"]), ("http://localhost/callback", ["127.0.0.1", "::1"]),
            ("http://[::1]/callback", ["::1"]), ("http://127.0.0.2:0/callback", ["127.0.0.2"]),
        ])
    func boundToLoopback(redirect: String, expected: [String]) throws {
        let needsIPv6 = expected.contains("::1")
        try withKnownIssue("this machine has no IPv6 loopback") {
            let listener = try LoopbackListener(redirectURL: #require(URL(string: redirect)))
            let bound = try listener.listeningDescriptors.map(boundAddress)
            #expect(bound.map(\.host) == expected)
            #expect(bound.allSatisfy { $0.port == listener.port })
            #expect(listener.listeningDescriptors.allSatisfy(isListening))
        } when: {
            needsIPv6 && !ipv6LoopbackAvailable()
        }
    }

    // MARK: - From another host

    /// Two network namespaces made for this test (needs root and iproute2): "machine" holds the listener, "remote"
    /// is another host on a veth link. From "remote", the machine's address on the listener's port is refused; a
    /// control socket bound to the wildcard address on the machine is reachable the same way, so the refusal is the
    /// listener's binding and not a broken link. Only the two namespaces' own addresses (documentation ranges
    /// 198.51.100.0/30 and 2001:db8::/64) are ever connected to.
    @Test(
        "a connection from another host to this machine's address on the listener's port is refused",
        .tags(.root), ExternalTools.condition,
        .enabled(if: TestNetwork.isAvailable, "needs root and iproute2 to create network namespaces"))
    func unreachableFromAnotherHost() async throws {
        // One pair of namespaces for all three redirect hosts: making and deleting namespaces is slow kernel work
        // that would otherwise slow the timing tests running beside this one.
        let network = try await BlockingWork.run { try TestNetwork() }
        defer { network.remove() }
        for redirect in ["http://127.0.0.1/callback", "http://localhost/callback", "http://[::1]/callback"] {
            let url = try #require(URL(string: redirect))

            // On the machine: the listener, a wildcard control socket, and a loopback connection that works.
            let (listener, control, controlPort) = try await network.onMachine {
                () throws -> (LoopbackListener, Int32, Int) in
                let listener = try LoopbackListener(redirectURL: url)
                let (control, controlPort) = try wildcardListener()
                _ = try TestSocket(host: redirect.contains("[::1]") ? "::1" : "127.0.0.1", port: listener.port)
                return (listener, control, controlPort)
            }
            defer { Glibc.close(control) }

            // From the remote host: the machine's addresses.
            let results = try await network.onRemote { () -> [String: [Int32]] in
                var results: [String: [Int32]] = [:]
                for host in [TestNetwork.machineIPv4, TestNetwork.machineIPv6] {
                    results[host] = [
                        connectError(host: host, port: listener.port), connectError(host: host, port: controlPort),
                    ]
                }
                return results
            }
            for (host, errors) in results {
                #expect(
                    errors[0] == ECONNREFUSED,
                    "\(redirect): \(host):\(listener.port) gave \(String(cString: strerror(errors[0])))")
                #expect(
                    errors[1] == 0,
                    "\(redirect): the control socket at \(host):\(controlPort) gave \(String(cString: strerror(errors[1])))"
                )
            }
            listener.close()
        }
    }

    // MARK: - Helpers

    /// The address a socket is bound to.
    func boundAddress(_ fd: Int32) throws -> (host: String, port: Int) {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0 else { throw TestFailure("getsockname: \(String(cString: strerror(errno)))") }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        func host() -> String { String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        return try withUnsafeBytes(of: storage) { raw in
            switch Int32(storage.ss_family) {
            case AF_INET:
                var address = raw.load(as: sockaddr_in.self)
                inet_ntop(AF_INET, &address.sin_addr, &text, socklen_t(text.count))
                return (host(), Int(UInt16(bigEndian: address.sin_port)))
            case AF_INET6:
                var address = raw.load(as: sockaddr_in6.self)
                inet_ntop(AF_INET6, &address.sin6_addr, &text, socklen_t(text.count))
                return (host(), Int(UInt16(bigEndian: address.sin6_port)))
            default:
                throw TestFailure("address family \(storage.ss_family)")
            }
        }
    }

    /// Whether the socket is listening (`SO_ACCEPTCONN`).
    func isListening(_ fd: Int32) -> Bool {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &value, &length) == 0 && value == 1
    }
}

/// A listening socket on every address (`[::]`, IPv4 too) on an ephemeral port: reachable from anywhere.
private func wildcardListener() throws -> (fd: Int32, port: Int) {
    let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw TestFailure("socket: \(errno)") }
    var off: Int32 = 0
    setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &off, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in6()
    address.sin6_family = sa_family_t(AF_INET6)
    address.sin6_addr = in6addr_any
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
        }
    }
    guard bound == 0, listen(fd, 8) == 0 else {
        Glibc.close(fd)
        throw TestFailure("bind/listen [::]: \(String(cString: strerror(errno)))")
    }
    var storage = sockaddr_in6()
    var length = socklen_t(MemoryLayout<sockaddr_in6>.size)
    _ = withUnsafeMutablePointer(to: &storage) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return (fd, Int(UInt16(bigEndian: storage.sin6_port)))
}

/// The `errno` of a blocking connect to `host:port` (0 when it connects); the send time limit also bounds the connect.
private func connectError(host: String, port: Int) -> Int32 {
    let fd = socket(
        host.contains(":") ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return errno }
    defer { Glibc.close(fd) }
    var limit = timeval(tv_sec: 3, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    return withSocketAddress(host: host, port: port) { Glibc.connect(fd, $0, $1) } == 0 ? 0 : errno
}
