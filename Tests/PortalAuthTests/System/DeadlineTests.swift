import Synchronization
import Testing
@testable import PortalAuth
@testable import PortalAuthCore

@Suite("Deadline", .timeLimit(.minutes(1)))
struct DeadlineTests {
    struct TimedOut: Error {}

    @Test("returns the body's value when it finishes first")
    func finishesFirst() async throws {
        let value = try await withDeadline(.seconds(5), onTimeout: { TimedOut() }) { 42 }
        #expect(value == 42)
    }

    @Test("throws the timeout error and cancels the body")
    func timesOut() async throws {
        // The body would sleep for an hour: only the deadline ends it (the suite's time limit guards a hang), and
        // the body sees its cancellation.
        let bodyCancelled = Mutex(false)
        await #expect(throws: TimedOut.self) {
            try await withDeadline(.milliseconds(200), onTimeout: { TimedOut() }) {
                do {
                    try await Task.sleep(for: .seconds(3600))
                } catch is CancellationError {
                    bodyCancelled.withLock { $0 = true }
                    throw CancellationError()
                }
                return 1
            }
        }
        #expect(bodyCancelled.withLock { $0 })
    }

    @Test("a body error passes through")
    func bodyError() async {
        struct Boom: Error {}
        await #expect(throws: Boom.self) {
            try await withDeadline(.seconds(5), onTimeout: { TimedOut() }) { () async throws -> Int in throw Boom() }
        }
    }
}
