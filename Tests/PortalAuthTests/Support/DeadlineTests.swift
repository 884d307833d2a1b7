import Testing
@testable import PortalAuth

@Suite("Deadline")
struct DeadlineTests {
    struct TimedOut: Error {}

    @Test("returns the body's value when it finishes first")
    func finishesFirst() async throws {
        let value = try await withDeadline(.seconds(5), onTimeout: { TimedOut() }) { 42 }
        #expect(value == 42)
    }

    @Test("throws the timeout error and cancels the body")
    func timesOut() async throws {
        let clock = ContinuousClock()
        let start = clock.now
        await #expect(throws: TimedOut.self) {
            try await withDeadline(.milliseconds(200), onTimeout: { TimedOut() }) {
                try await Task.sleep(for: .seconds(30))
                return 1
            }
        }
        #expect(start.duration(to: clock.now) < .seconds(5))
    }

    @Test("a body error passes through")
    func bodyError() async {
        struct Boom: Error {}
        await #expect(throws: Boom.self) {
            try await withDeadline(.seconds(5), onTimeout: { TimedOut() }) { () async throws -> Int in throw Boom() }
        }
    }
}
