internal import CPortalAuthSystem
import Glibc

/// Keeps tokens, refresh tokens and passwords held in memory out of core files.
///
/// A crash of a process that holds secrets would otherwise write them to a core file (or hand them to
/// `systemd-coredump`), where they outlive the process. ``disable()`` sets the core-file size limit to zero
/// (`setrlimit(RLIMIT_CORE)`, which a pipe `core_pattern` such as systemd-coredump also honours) and marks the
/// process not dumpable (`prctl(PR_SET_DUMPABLE, 0)`: no core at all, whatever the limit, and other processes of
/// the same user can no longer attach to it or read its memory through `/proc`). Programs started afterwards
/// (`execve`) are dumpable again and keep the zero core limit.
///
/// `portal-auth` calls it first thing; a program using the library calls it before it loads credentials:
/// ```swift
/// try CoreDumpProtection.disable()
/// ```
package enum CoreDumpProtection {
    /// Disables core dumps of this process for the rest of its life. Idempotent.
    ///
    /// - Throws: `CoreDumpProtectionError` naming the call that failed (the other one is applied anyway).
    package static func disable() throws(CoreDumpProtectionError) {
        var failures: [String] = []
        var limit = rlimit(rlim_cur: 0, rlim_max: 0)
        if setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &limit) != 0 {
            failures.append("setrlimit(RLIMIT_CORE): \(String(cString: strerror(errno)))")
        }
        if pa_set_dumpable(0) != 0 {
            failures.append("prctl(PR_SET_DUMPABLE): \(String(cString: strerror(errno)))")
        }
        if !failures.isEmpty { throw CoreDumpProtectionError(failures: failures) }
    }

    /// The process's core-file size limit (soft, hard), for tests and diagnostics.
    package static var coreLimit: (soft: UInt64, hard: UInt64)? {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &limit) == 0 else { return nil }
        return (UInt64(limit.rlim_cur), UInt64(limit.rlim_max))
    }

    /// Whether the process is marked dumpable (`PR_GET_DUMPABLE`), for tests and diagnostics.
    package static var isDumpable: Bool {
        pa_get_dumpable() != 0
    }
}

/// Core dumps could not be disabled (see `CoreDumpProtection.disable()`).
package struct CoreDumpProtectionError: Error, Sendable, CustomStringConvertible, CategorizedError {
    /// The calls that failed, each with its `errno` text.
    package let failures: [String]

    package var category: ErrorCategory { .local }
    package var description: String {
        "core dumps could not be disabled" + MessagePart.given(" (", failures.joined(separator: "; "), ")")
            + "; a crash could leave tokens in a core file"
    }
}
