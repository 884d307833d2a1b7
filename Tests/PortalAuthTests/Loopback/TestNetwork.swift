import Foundation
import PortalAuth
import Glibc
import Synchronization

/// Two network namespaces joined by a veth link, made for one test and removed after it: "machine" (198.51.100.1,
/// 2001:db8::1, with its own loopback interface) and "remote" (198.51.100.2, 2001:db8::2). Code runs in either on a
/// thread of its own that joins the namespace (`setns`), so the test process itself never leaves its own.
///
/// Needs root and iproute2's `ip` (scripts/setup installs iproute2). The addresses are documentation ranges that
/// exist only inside these namespaces: no traffic leaves them.
final class TestNetwork: Sendable {
    static let machineIPv4 = "198.51.100.1"
    static let remoteIPv4 = "198.51.100.2"
    static let machineIPv6 = "2001:db8::1"
    static let remoteIPv6 = "2001:db8::2"

    /// `ip`, where it is installed.
    static let ipCommand = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// Whether this process can make network namespaces: root, `ip`, and `setns` in the C library.
    static let isAvailable = getuid() == 0 && ipCommand != nil && setnsFunction != nil

    private static let counter = Atomic<Int>(0)

    let machine: String
    let remote: String

    /// Creates both namespaces and the link; removes what it made when a step fails.
    init() throws {
        Self.removeAbandoned()
        let serial = Self.counter.add(1, ordering: .relaxed).newValue
        machine = "pa-m-\(getpid())-\(serial)"
        remote = "pa-r-\(getpid())-\(serial)"
        do {
            try Self.ip("netns", "add", machine)
            try Self.ip("netns", "add", remote)
            try Self.ip("-n", machine, "link", "add", "va", "type", "veth", "peer", "name", "vb", "netns", remote)
            try Self.ip("-n", machine, "addr", "add", "198.51.100.1/30", "dev", "va")
            try Self.ip("-n", remote, "addr", "add", "198.51.100.2/30", "dev", "vb")
            try Self.ip("-n", machine, "addr", "add", "2001:db8::1/64", "dev", "va", "nodad")
            try Self.ip("-n", remote, "addr", "add", "2001:db8::2/64", "dev", "vb", "nodad")
            for (namespace, link) in [(machine, "va"), (remote, "vb")] {
                try Self.ip("-n", namespace, "link", "set", "lo", "up")
                try Self.ip("-n", namespace, "link", "set", link, "up")
            }
        } catch {
            remove()
            throw error
        }
    }

    /// Deletes both namespaces (and with them the link).
    func remove() {
        for namespace in [machine, remote] { try? Self.ip("netns", "del", namespace) }
    }

    /// Runs `body` on a new thread inside the "machine" namespace.
    func onMachine<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await Self.run(in: machine, body)
    }

    /// Runs `body` on a new thread inside the "remote" namespace.
    func onRemote<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await Self.run(in: remote, body)
    }

    // MARK: - Pieces

    /// Deletes namespaces of earlier test processes that died before removing theirs (`pa-m-<pid>-…`).
    private static func removeAbandoned() {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/var/run/netns")) ?? []
        for name in names where name.hasPrefix("pa-m-") || name.hasPrefix("pa-r-") {
            guard let pid = Int32(name.split(separator: "-")[2]), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH
            else { continue }
            try? ip("netns", "del", name)
        }
    }

    private static func run<T: Sendable>(in namespace: String, _ body: @escaping @Sendable () throws -> T) async throws
        -> T
    {
        try await BlockingWork.run {
            // The thread ends after `body`, and the namespace with it; sockets made here stay in the namespace.
            let fd = open("/var/run/netns/\(namespace)", O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                throw TestFailure("open /var/run/netns/\(namespace): \(String(cString: strerror(errno)))")
            }
            defer { close(fd) }
            guard let setns = setnsFunction, setns(fd, cloneNewNet) == 0 else {
                throw TestFailure("setns \(namespace): \(String(cString: strerror(errno)))")
            }
            return try body()
        }
    }

    /// `CLONE_NEWNET` from <sched.h>, which Swift's Glibc module leaves out (it needs `_GNU_SOURCE`).
    private static let cloneNewNet: Int32 = 0x4000_0000

    /// `int setns(int fd, int nstype)`, looked up at run time for the same reason.
    private static let setnsFunction: (@convention(c) (Int32, Int32) -> Int32)? = {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "setns") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
    }()

    /// Runs `ip` with `arguments`; throws with its standard error when it fails.
    private static func ip(_ arguments: String...) throws {
        guard let ipCommand else { throw TestFailure("iproute2's ip is not installed") }
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: ipCommand)
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw TestFailure(
                "ip \(arguments.joined(separator: " ")): \(message.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
    }
}
