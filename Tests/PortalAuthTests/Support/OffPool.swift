import Foundation

/// Runs blocking work (socket reads, starting a child process and reading its first line, waiting for
/// `openssl`) on a thread of its own, so that it never occupies one of the few threads of Swift's
/// cooperative pool (two on a two-core machine) while timing-sensitive tests run beside it.
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
