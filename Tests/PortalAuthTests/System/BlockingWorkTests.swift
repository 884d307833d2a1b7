import Dispatch
import Foundation
import Synchronization
import Testing
@testable import PortalAuth

@Suite("Blocking work runs on a thread of its own, off the cooperative pool")
struct BlockingWorkTests {
    /// A failure thrown by the work.
    struct WorkFailure: Error, Equatable {
        let code: Int
    }

    /// A hang guard only: the events asserted below happen long before it on any machine.
    static let hangGuard = DispatchTimeInterval.seconds(60)

    @Test("the work's value comes back to the caller")
    func returnsValue() async throws {
        let value = try await BlockingWork.run { 6 * 7 }
        #expect(value == 42)
    }

    @Test("the work's error reaches the caller unchanged")
    func propagatesError() async throws {
        await #expect(throws: WorkFailure(code: 7)) {
            try await BlockingWork.run { () throws -> Int in throw WorkFailure(code: 7) }
        }
    }

    @Test("a task cancelled before the work starts never runs it and gets CancellationError")
    func cancelledBeforeStart() async throws {
        let ran = Mutex(false)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await BlockingWork.run { ran.withLock { $0 = true } }
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        // Any thread started would have run by now had the work not been skipped: wait for one that runs after it.
        try await BlockingWork.run {}
        #expect(ran.withLock { $0 } == false)
    }

    @Test("a task cancelled while the work runs lets it finish and gets its value")
    func cancelledWhileRunning() async throws {
        let started = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        let task = Task {
            try await BlockingWork.run { () -> String in
                started.signal()
                return gate.wait(timeout: .now() + Self.hangGuard) == .success ? "finished" : "hang guard"
            }
        }
        try await BlockingWork.run { #expect(started.wait(timeout: .now() + Self.hangGuard) == .success) }
        task.cancel()
        gate.signal()
        #expect(try await task.value == "finished")
    }

    @Test("more blocked jobs than the pool has threads leave the pool free for other tasks")
    func leavesPoolFree() async throws {
        let jobs = max(8, 2 * ProcessInfo.processInfo.activeProcessorCount + 1)
        let gate = DispatchSemaphore(value: 0)
        let (started, starting) = AsyncStream.makeStream(of: Int.self)
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for job in 0..<jobs {
                group.addTask {
                    try await BlockingWork.run {
                        starting.yield(job)
                        return gate.wait(timeout: .now() + Self.hangGuard) == .success
                    }
                }
            }
            // Every job is blocked now; this task (and the one below) still get a thread of the pool.
            var blocked = 0
            for await _ in started {
                blocked += 1
                if blocked == jobs { break }
            }
            let fromThePool = await Task.detached { "ran" }.value
            #expect(fromThePool == "ran")
            for _ in 0..<jobs { gate.signal() }
            var released = 0
            for try await opened in group where opened { released += 1 }
            #expect(released == jobs, "a job waited until the hang guard: the gate opened only after it gave up")
        }
    }
}
