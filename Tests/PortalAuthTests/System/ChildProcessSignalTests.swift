import Foundation
import Glibc
import PortalAuthCore
import Testing

/// A child starts with no signal blocked or ignored, whatever the thread that spawns it blocks: the agent's threads
/// block SIGTERM, and a confirmation program or browser started from one must still end on SIGTERM.
@Suite("ChildProcess: the child's signals")
struct ChildProcessSignalTests {
    /// The `SigBlk` and `SigIgn` masks of a child spawned from a thread that blocks SIGTERM and ignores SIGPIPE.
    private static func childMasks() throws -> (blocked: UInt64, ignored: UInt64) {
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGTERM)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        let previousPipe = signal(SIGPIPE, SIG_IGN)
        defer {
            pthread_sigmask(SIG_SETMASK, &previous, nil)
            signal(SIGPIPE, previousPipe)
        }
        let child = ChildProcess()
        child.executableURL = URL(fileURLWithPath: "/bin/cat")
        child.arguments = ["/proc/self/status"]
        let output = Pipe()
        child.standardOutput = output
        try child.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        child.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        func mask(_ key: String) -> UInt64? {
            text.split(separator: "\n").first { $0.hasPrefix(key + ":") }
                .flatMap { UInt64($0.dropFirst(key.count + 1).trimmingCharacters(in: .whitespaces), radix: 16) }
        }
        return (try #require(mask("SigBlk")), try #require(mask("SigIgn")))
    }

    @Test("SIGTERM blocked and SIGPIPE ignored in the parent reach the child neither blocked nor ignored")
    func defaults() throws {
        let (blocked, ignored) = try Self.childMasks()
        #expect(blocked == 0, "the child starts with signals blocked: \(String(blocked, radix: 16))")
        #expect(ignored & (1 << UInt64(SIGPIPE - 1)) == 0, "SIGPIPE is ignored in the child")
        #expect(ignored & (1 << UInt64(SIGTERM - 1)) == 0, "SIGTERM is ignored in the child")
    }
}
