package import Logging
import PortalAuthCore
import Synchronization

/// The writes of an `ArcGISCredentialStore` to its file, one after another in the order the changes were made.
///
/// The store's synchronous `add(_:)` and `removeAll()` change memory at once and queue their write here; a write
/// that fails is logged and kept until `ArcGISCredentialStore.waitForPersistence()` reports it.
package final class StorePersistenceQueue: Sendable {
    private struct State {
        var tail: Task<Void, Never>?
        var failures: [any Error] = []
        var recoveries: [CorruptedStoreRecovery] = []
    }

    private let state = Mutex(State())

    package init() {}

    /// Runs `work` after every write queued before it and gives its outcome to the caller.
    package func run<Value: Sendable>(_ work: @escaping @Sendable () async throws -> Value) async throws -> Value {
        try await schedule(work).value
    }

    /// Queues `work` without waiting: a failure is logged as `error` with the store path and kept for
    /// `waitForAll()`; a corrupted file kept aside is kept for it too.
    package func runInBackground(
        logger: Logger, storePath: String, _ work: @escaping @Sendable () async throws -> CorruptedStoreRecovery?
    ) {
        _ = schedule {
            do {
                if let recovery = try await work() {
                    logger.warning(
                        "the credential store was corrupted and kept aside",
                        metadata: ["kept": "\(recovery.keptCopyPath)"])
                    self.state.withLock { $0.recoveries.append(recovery) }
                }
            } catch {
                logger.error(
                    "the credential store could not be written",
                    metadata: ["file": "\(storePath)", "error": "\(error)"])
                self.state.withLock { $0.failures.append(error) }
            }
        }
    }

    /// Waits for every write queued so far; throws the first failure not reported before (and forgets the
    /// failures), else returns the last corrupted file kept aside since the previous wait.
    package func waitForAll() async throws -> CorruptedStoreRecovery? {
        let tail = state.withLock { $0.tail }
        await tail?.value
        let (failures, recoveries) = state.withLock { state in
            defer { state.failures = []; state.recoveries = [] }
            return (state.failures, state.recoveries)
        }
        if let first = failures.first { throw first }
        return recoveries.last
    }

    private func schedule<Value: Sendable>(_ work: @escaping @Sendable () async throws -> Value) -> Task<
        Value, any Error
    > {
        state.withLock { state in
            let previous = state.tail
            let task = Task.keepingExecutor {
                await previous?.value
                return try await work()
            }
            state.tail = Task.keepingExecutor { _ = try? await task.value }
            return task
        }
    }
}
