import Glibc
import Synchronization

/// Runs asynchronous work on the thread that asks for it, instead of Swift's global concurrent pool.
///
/// `portal-auth token` and `refresh` are run before every call of a script: starting the pool (its worker
/// threads and their management) costs about as much as the token itself (issue 17). With this executor as
/// the task's preference, the work and every default actor it calls run here, one job after another, while the
/// calling thread waits in ``run(_:)``; blocking calls that wait on a person or another program move to threads of
/// their own (`BlockingWork`) and come back as jobs, and the tasks the work starts prefer this executor too
/// (`Task.keepingExecutor`). What does not
/// go through a task executor (a `Task.sleep` timer) uses the global pool, which starts only then.
///
/// Short blocking work (`BlockingWork`'s pool work: the store's reads, lock file and writes) runs on this thread
/// itself (``isRunningHere``): the thread would only wait for it, and handing it to a pool thread and back cost
/// two thread switches each time, about a third of a refresh's context switches, each a wait for a processor on a
/// busy machine. Work that waits on a person or another program keeps a thread of its own.
package final class CallerThreadExecutor: TaskExecutor, @unchecked Sendable {
    /// The jobs waiting, and whether the work is done: both under `lock`; `signal` wakes the waiting thread.
    private var jobs: [UnownedJob] = []
    private var done = false
    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let signal = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    private init() {
        pthread_mutex_init(lock, nil)
        pthread_cond_init(signal, nil)
    }

    deinit {
        pthread_cond_destroy(signal)
        pthread_mutex_destroy(lock)
        signal.deallocate()
        lock.deallocate()
    }

    /// Runs `body` to its end on the calling thread and returns when it has.
    package static func run(_ body: @escaping @Sendable () async -> Void) {
        let executor = CallerThreadExecutor()
        Task(executorPreference: executor) {
            await body()
            executor.finish()
        }
        let outer = drainingThread.exchange(UInt(pthread_self()), ordering: .relaxed)
        executor.drain()
        drainingThread.store(outer, ordering: .relaxed)
    }

    /// The thread running ``run(_:)``'s jobs (0: none).
    private static let drainingThread = Atomic<UInt>(0)

    /// Whether the calling code runs on the thread of ``run(_:)`` (as one of its jobs): blocking work then runs here.
    package static var isRunningHere: Bool {
        let current = drainingThread.load(ordering: .relaxed)
        return current != 0 && current == UInt(pthread_self())
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        pthread_mutex_lock(lock)
        jobs.append(job)
        pthread_cond_signal(signal)
        pthread_mutex_unlock(lock)
    }

    /// Marks the work done and wakes the waiting thread.
    private func finish() {
        pthread_mutex_lock(lock)
        done = true
        pthread_cond_signal(signal)
        pthread_mutex_unlock(lock)
    }

    /// Runs jobs as they come until the work is done and no job is left.
    private func drain() {
        while true {
            pthread_mutex_lock(lock)
            while jobs.isEmpty && !done { pthread_cond_wait(signal, lock) }
            let next = jobs.isEmpty ? nil : jobs.removeFirst()
            pthread_mutex_unlock(lock)
            guard let job = next else { return }
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
