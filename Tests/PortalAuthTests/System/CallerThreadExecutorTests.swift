import Glibc
import Synchronization
import Testing

@testable import PortalAuth
@testable import PortalAuthCore

/// The executor of `portal-auth token` and `refresh` (issue 17): the work, the actors it calls and the tasks it
/// starts with `Task.keepingExecutor` run on the thread that called `run`; blocking work still runs elsewhere.
/// Each test calls `run` from a thread of its own (`BlockingWork`), never from the cooperative pool it would block.
@Suite("The caller's-thread executor runs a command's tasks on the calling thread", .timeLimit(.minutes(1)))
struct CallerThreadExecutorTests {
    /// An actor whose methods report the thread they run on.
    actor Counter {
        private var count = 0
        func increment() -> (count: Int, thread: pthread_t) {
            count += 1
            return (count, threadID())
        }
    }

    /// What the work saw, in order.
    final class Record: Sendable {
        let events = Mutex<[String]>([])
        let threads = Mutex<[String: pthread_t]>([:])
        func note(_ event: String, thread: pthread_t = threadID()) {
            events.withLock { $0.append(event) }
            threads.withLock { $0[event] = thread }
        }
        func thread(_ event: String) -> pthread_t? { threads.withLock { $0[event] } }
    }

    /// Runs `body` with the executor on a new thread; returns that thread's ID after `run` returned.
    private func runOnOwnThread(_ body: @escaping @Sendable () async -> Void) async throws -> pthread_t {
        try await BlockingWork.run(name: "caller-thread-test") {
            CallerThreadExecutor.run(body)
            return threadID()
        }
    }

    @Test("the body, an actor's methods and a kept-executor task run on the calling thread, in order")
    func sameThread() async throws {
        let record = Record()
        let caller = try await runOnOwnThread {
            record.note("body")
            let counter = Counter()
            let first = await counter.increment()
            record.note("actor \(first.count)", thread: first.thread)
            let child = Task.keepingExecutor { () async -> pthread_t in
                let again = await counter.increment()
                record.note("child actor \(again.count)", thread: again.thread)
                return threadID()
            }
            record.note("child", thread: await child.value)
            record.note("end")
        }
        #expect(record.events.withLock { $0 } == ["body", "actor 1", "child actor 2", "child", "end"])
        for event in ["body", "actor 1", "child actor 2", "child", "end"] {
            #expect(record.thread(event) == caller, "\(event) ran on another thread")
        }
    }

    @Test("blocking work runs on a thread of its own and its result comes back to the calling thread")
    func blockingWork() async throws {
        let record = Record()
        let caller = try await runOnOwnThread {
            let worker = try? await BlockingWork.run { threadID() }
            record.note("worker", thread: worker ?? 0)
            record.note("after")
        }
        #expect(record.thread("worker") != caller)
        #expect(record.thread("worker") != 0)
        #expect(record.thread("after") == caller)
    }

    @Test("a task cancelled from another thread ends the work, and run returns")
    func cancelledFromOutside() async throws {
        let record = Record()
        let holder = TaskHolder()
        async let caller = runOnOwnThread {
            let task = Task.keepingExecutor { () async throws -> Void in
                record.note("sleeping")
                try await Task.sleep(for: .seconds(600))
            }
            holder.set(task)
            _ = await task.result
            record.note(task.isCancelled ? "cancelled" : "finished")
        }
        // Cancel once the task is there (from this, a pool thread); the ten-minute sleep then ends at once.
        while !holder.cancel() { try await Task.sleep(for: .milliseconds(5)) }
        let thread = try await caller
        #expect(record.events.withLock { $0 } == ["sleeping", "cancelled"])
        #expect(record.thread("cancelled") == thread)
    }

    @Test("without a preferred executor, a kept-executor task is an ordinary task")
    func noPreference() async throws {
        let value = try await Task.keepingExecutor { () async throws -> Int in 6 * 7 }.value
        #expect(value == 42)
        let nothing = await Task.keepingExecutor { () async -> String in "plain" }.value
        #expect(nothing == "plain")
    }
}

/// The calling thread (distinct among threads alive at the same time).
private func threadID() -> pthread_t { pthread_self() }

/// A task handed from the work to the test's thread, to be cancelled there.
private final class TaskHolder: Sendable {
    private let task = Mutex<Task<Void, any Error>?>(nil)
    func set(_ value: Task<Void, any Error>) { task.withLock { $0 = value } }
    /// Cancels the task if it is there yet; whether it was.
    func cancel() -> Bool {
        guard let value = task.withLock({ $0 }) else { return false }
        value.cancel()
        return true
    }
}
