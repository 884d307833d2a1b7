import Foundation
@testable import PortalAuth
@testable import PortalAuthCore

/// The unit tests' own blocking waits (a test client's socket, a fake server's start), each on a
/// thread of its own.
///
/// It shadows the library's `PortalAuth.BlockingWork` in this test target on purpose: the library's pool has only
/// `PortalAuth.BlockingWork.poolSize` threads, and tests running in parallel wait on servers and clients that may wait
/// in turn on other tests' helpers; queued behind each other in the pool they would stall. Same calls, same
/// cancellation rule (a task cancelled before the work starts never runs it).
enum BlockingWork {
    /// Runs `body` on a new thread and returns its result or throws its error.
    static func run<T: Sendable>(
        name: String = "PortalAuthTests.blocking", _ body: @escaping @Sendable () throws -> T
    ) async throws -> T {
        try await PortalAuth.BlockingWork.run(name: name, dedicatedThread: true, body)
    }

    /// Starts `body` on a new thread that nobody waits for.
    static func detach(name: String = "PortalAuthTests.blocking", _ body: @escaping @Sendable () -> Void) {
        PortalAuth.BlockingWork.detach(name: name, body)
    }
}
