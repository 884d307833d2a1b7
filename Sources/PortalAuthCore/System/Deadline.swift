/// Runs `body` until it finishes or `timeout` passes, calling `tick` about once a second with the time left.
///
/// When time runs out the body's task is cancelled and `onTimeout()` is thrown; cancelling the
/// caller cancels the body too.
package func withDeadline<Result: Sendable>(
    _ timeout: Duration,
    tick: @escaping @Sendable (Duration) -> Void = { _ in },
    onTimeout: @escaping @Sendable () -> any Error,
    _ body: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    try await withThrowingTaskGroup(of: Result?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            let clock = ContinuousClock()
            let end = clock.now.advanced(by: timeout)
            while clock.now < end {
                tick(clock.now.duration(to: end))
                try await Task.sleep(for: min(.seconds(1), clock.now.duration(to: end)))
            }
            return nil
        }
        defer { group.cancelAll() }
        while let next = try await group.next() {
            if let value = next { return value }
            throw onTimeout()
        }
        throw CancellationError()
    }
}
