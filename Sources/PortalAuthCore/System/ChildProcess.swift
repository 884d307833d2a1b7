package import Foundation
import Glibc
internal import CPortalAuthSystem

/// A child process started with `posix_spawn`: the part of Foundation's `Process` that this package and its tests
/// use, under the same names.
///
/// Why not `Process`: on Linux, Swift 6.3's `Process.run()` lists `/proc/self/fd` with a 256-byte copy of each
/// directory entry and now and then reads past the end of its buffer and crashes the whole process, more often the
/// more descriptors are open (swift-corelibs-foundation pull request 5472). A test process with hundreds of sockets
/// open hit it about once in ten runs. Here the child closes every inherited descriptor above 2 with
/// `posix_spawn_file_actions_addclosefrom_np` instead.
package final class ChildProcess: @unchecked Sendable {
    /// How the process ended.
    package enum TerminationReason: Sendable, Equatable {
        case exit, uncaughtSignal
    }

    /// The program to run.
    package var executableURL: URL?
    /// Its arguments (without the program itself).
    package var arguments: [String]?
    /// Its whole environment; `nil` passes this process's environment.
    package var environment: [String: String]?
    /// Its working directory; `nil` keeps this process's.
    package var currentDirectoryURL: URL?
    /// A `Pipe`, a `FileHandle`, or `nil` for /dev/null; by default this process's own.
    package var standardInput: Any? = FileHandle.standardInput
    /// A `Pipe`, a `FileHandle`, or `nil` for /dev/null; by default this process's own.
    package var standardOutput: Any? = FileHandle.standardOutput
    /// A `Pipe`, a `FileHandle`, or `nil` for /dev/null; by default this process's own.
    package var standardError: Any? = FileHandle.standardError

    private let condition = NSCondition()
    private var pid: pid_t = 0
    private var running = false
    private var status: Int32 = 0
    private var reason = TerminationReason.exit

    /// Creates a process to configure, then `run()`.
    package init() {}

    /// The child's process ID, 0 before `run()`.
    package var processIdentifier: Int32 { condition.withLock { pid } }
    /// Whether the child was started and has not ended yet.
    package var isRunning: Bool { condition.withLock { running } }
    /// The exit status, or the signal that ended it (see `terminationReason`); only after it ended.
    package var terminationStatus: Int32 { condition.withLock { status } }
    /// Whether it exited or was ended by a signal; only after it ended.
    package var terminationReason: TerminationReason { condition.withLock { reason } }

    // MARK: - Running

    /// Starts the child; a thread of its own waits for it to end.
    package func run() throws {
        guard let path = executableURL?.path else { throw ChildProcessError(program: "(none)", errno: ENOENT) }
        guard access(path, X_OK) == 0 else { throw ChildProcessError(program: path, errno: errno) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var inParentToClose: [FileHandle] = []
        for (target, value, reads) in [
            (STDIN_FILENO, standardInput, true), (STDOUT_FILENO, standardOutput, false),
            (STDERR_FILENO, standardError, false),
        ] {
            switch value {
            case let pipe as Pipe:
                let childEnd = reads ? pipe.fileHandleForReading : pipe.fileHandleForWriting
                posix_spawn_file_actions_adddup2(&actions, childEnd.fileDescriptor, target)
                inParentToClose.append(childEnd)
            case let handle as FileHandle where handle.fileDescriptor >= 0:
                if handle.fileDescriptor != target {
                    posix_spawn_file_actions_adddup2(&actions, handle.fileDescriptor, target)
                }
            default:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", reads ? O_RDONLY : O_WRONLY, 0)
            }
        }
        _ = pa_spawn_addclosefrom(&actions, 3)
        if let directory = currentDirectoryURL?.path { _ = pa_spawn_addchdir(&actions, directory) }

        let argv = ([path] + (arguments ?? [])).map { strdup($0) } + [nil]
        let env = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            env.forEach { free($0) }
        }
        // The child starts with no signal blocked and the usual signals at their defaults, whatever the spawning
        // thread blocks or ignores (the agent's threads block SIGTERM; SIGPIPE is ignored in this process): a
        // browser or confirmation program must end when it is told to.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD, SIGUSR1, SIGUSR2] {
            sigaddset(&defaults, signal)
        }
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var child: pid_t = 0
        let result = posix_spawn(&child, path, &actions, &attributes, argv, env)
        guard result == 0 else { throw ChildProcessError(program: path, errno: result) }
        for handle in inParentToClose { try? handle.close() }

        let spawned = child
        condition.withLock {
            pid = spawned
            running = true
        }
        BlockingWork.detach(name: "PortalAuth.child-reaper") { [self] in
            var raw: Int32 = 0
            while waitpid(spawned, &raw, 0) == -1 && errno == EINTR {}
            condition.withLock {
                // WIFSIGNALED / WTERMSIG / WEXITSTATUS, which Swift does not import as macros.
                let signal = raw & 0x7f
                if signal != 0 && signal != 0x7f {
                    status = signal
                    reason = .uncaughtSignal
                } else {
                    status = (raw >> 8) & 0xff
                    reason = .exit
                }
                running = false
                condition.broadcast()
            }
        }
    }

    /// Blocks until the child has ended.
    package func waitUntilExit() {
        condition.withLock {
            while running { condition.wait() }
        }
    }

    /// Sends SIGINT.
    package func interrupt() { signal(SIGINT) }

    /// Sends SIGTERM.
    package func terminate() { signal(SIGTERM) }

    private func signal(_ number: Int32) {
        let child = processIdentifier
        if child > 0 { kill(child, number) }
    }
}

/// A child process could not be started: the program and the system's reason.
package struct ChildProcessError: Error, CustomStringConvertible {
    /// The program's path.
    package let program: String
    /// The `errno` value.
    package let errno: Int32

    package var description: String {
        "cannot run \(MessagePart.or(program, "the program")): \(String(cString: strerror(errno)))"
    }
}
