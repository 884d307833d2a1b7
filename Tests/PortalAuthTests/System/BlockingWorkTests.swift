import Dispatch
import Foundation
import Glibc
import Synchronization
import Testing
@testable import PortalAuth
@testable import PortalAuthCore

@Suite("Blocking work runs on a small bounded pool, off the cooperative pool", .serialized)
struct BlockingWorkTests {
    /// A failure thrown by the work.
    struct WorkFailure: Error, Equatable {
        let code: Int
    }

    /// A hang guard only: the events asserted below happen long before it on any machine.
    static let hangGuard = DispatchTimeInterval.seconds(60)

    @Test("the work's value comes back to the caller")
    func returnsValue() async throws {
        let value = try await PortalAuth.BlockingWork.run { 6 * 7 }
        #expect(value == 42)
    }

    @Test(
        "under CallerThreadExecutor (token, refresh), pool work runs on the calling thread; dedicated work and other threads' keep their own"
    )
    func inlineOnTheCallersThread() throws {
        let seen = Mutex<[String: (same: Bool, cancelled: Bool)]>([:])
        let caller = UInt(pthread_self())
        CallerThreadExecutor.run {
            @Sendable func here() -> Bool { UInt(pthread_self()) == caller }
            let pool = (try? await PortalAuth.BlockingWork.run { here() }) ?? false
            let ignoring = (try? await PortalAuth.BlockingWork.runIgnoringCancellation { here() }) ?? false
            let dedicated = (try? await PortalAuth.BlockingWork.run(dedicatedThread: true) { here() }) ?? true
            // A task of the global pool (no executor preference) is not the caller's thread: its work goes to the pool.
            let elsewhere = await Task.detached { (try? await PortalAuth.BlockingWork.run { here() }) ?? true }.value
            // Cancelled before it starts: still never run, CancellationError as on the pool.
            let ran = Mutex(false)
            let cancelled = await Task.keepingExecutor { () async -> Bool in
                withUnsafeCurrentTask { $0?.cancel() }
                do {
                    try await PortalAuth.BlockingWork.run { ran.withLock { $0 = true } }
                    return false
                } catch {
                    return error is CancellationError
                }
            }.value
            seen.withLock {
                $0 = [
                    "pool": (pool, false), "ignoring": (ignoring, false), "dedicated": (dedicated, false),
                    "elsewhere": (elsewhere, false), "cancelled": (ran.withLock { $0 }, cancelled),
                ]
            }
        }
        let result = seen.withLock { $0 }
        #expect(result["pool"]?.same == true, "run() left the caller's thread")
        #expect(result["ignoring"]?.same == true, "runIgnoringCancellation() left the caller's thread")
        #expect(result["dedicated"]?.same == false, "dedicated work ran on the caller's thread")
        #expect(result["elsewhere"]?.same == false, "work of another thread ran on the caller's")
        #expect(result["cancelled"]?.same == false, "work of a cancelled task ran")
        #expect(result["cancelled"]?.cancelled == true, "a cancelled task's work did not throw CancellationError")
        // Outside run(), nothing runs inline.
        #expect(!CallerThreadExecutor.isRunningHere)
    }

    @Test("the work's error reaches the caller unchanged")
    func propagatesError() async throws {
        await #expect(throws: WorkFailure(code: 7)) {
            try await PortalAuth.BlockingWork.run { () throws -> Int in throw WorkFailure(code: 7) }
        }
    }

    @Test("a task cancelled before the work starts never runs it and gets CancellationError")
    func cancelledBeforeStart() async throws {
        let ran = Mutex(false)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await PortalAuth.BlockingWork.run { ran.withLock { $0 = true } }
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        // Any thread started would have run by now had the work not been skipped: wait for one that runs after it.
        try await PortalAuth.BlockingWork.run {}
        #expect(ran.withLock { $0 } == false)
    }

    @Test("a task cancelled while the work runs lets it finish and gets its value")
    func cancelledWhileRunning() async throws {
        let started = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        let task = Task {
            try await PortalAuth.BlockingWork.run { () -> String in
                started.signal()
                return gate.wait(timeout: .now() + Self.hangGuard) == .success ? "finished" : "hang guard"
            }
        }
        try await PortalAuth.BlockingWork.run { #expect(started.wait(timeout: .now() + Self.hangGuard) == .success) }
        task.cancel()
        gate.signal()
        #expect(try await task.value == "finished")
    }

    @Test("more blocked jobs than the pool has threads wait their turn, on at most poolSize threads, and all finish")
    func boundedPool() async throws {
        let jobs = PortalAuth.BlockingWork.poolSize + 3
        let gate = DispatchSemaphore(value: 0)
        let running = Running()
        let (started, starting) = AsyncStream.makeStream(of: Int.self)
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for job in 0..<jobs {
                group.addTask {
                    try await PortalAuth.BlockingWork.run {
                        running.state.withLock { state in
                            state.now += 1
                            state.most = max(state.most, state.now)
                            state.threads.insert(Self.threadID())
                        }
                        starting.yield(job)
                        defer { running.state.withLock { $0.now -= 1 } }
                        return gate.wait(timeout: .now() + Self.hangGuard) == .success
                    }
                }
            }
            // The pool is full of blocked jobs now; the cooperative pool is still free.
            var blocked = 0
            for await _ in started {
                blocked += 1
                if blocked == PortalAuth.BlockingWork.poolSize { break }
            }
            let fromThePool = await Task.detached { "ran" }.value
            #expect(fromThePool == "ran")
            // A job that waits on a person gets a thread of its own, whatever the pool is doing.
            let dedicated = try await PortalAuth.BlockingWork.run(dedicatedThread: true) { "dedicated" }
            #expect(dedicated == "dedicated")
            for _ in 0..<jobs { gate.signal() }
            var released = 0
            for try await opened in group where opened { released += 1 }
            #expect(released == jobs, "a job waited until the hang guard: the gate opened only after it gave up")
        }
        let state = running.state.withLock { $0 }
        #expect(state.most <= PortalAuth.BlockingWork.poolSize)
        #expect(state.threads.count <= PortalAuth.BlockingWork.poolSize)
        #expect(PortalAuth.BlockingWork.poolThreadCount <= PortalAuth.BlockingWork.poolSize)
    }

    /// Jobs running now, the most at once, and the threads they ran on.
    final class Running: Sendable {
        let state = Mutex((now: 0, most: 0, threads: Set<UInt64>()))
    }

    /// The id of the calling thread.
    static func threadID() -> UInt64 {
        UInt64(pthread_self())
    }
}
