extension Task where Failure == any Error {
    /// Like `Task { … }`, but the new task prefers the task executor that the calling task prefers (a task made
    /// with `Task(executorPreference:)`, such as the caller's-thread executor of `portal-auth token` and
    /// `refresh`), instead of Swift's global pool. Without such a preference it is a plain `Task { … }`.
    ///
    /// Unstructured tasks do not inherit the preference by themselves; sending each one to the global pool
    /// started its threads for a few microseconds of work (issue 17).
    @discardableResult
    package static func keepingExecutor(
        priority: TaskPriority? = nil, _ operation: sending @escaping () async throws -> Success
    ) -> Task<Success, any Error> {
        Task(executorPreference: currentTaskExecutor(), priority: priority, operation: operation)
    }
}

extension Task where Failure == Never {
    /// Like `Task { … }`, on the calling task's preferred task executor (see the throwing variant).
    @discardableResult
    package static func keepingExecutor(
        priority: TaskPriority? = nil, _ operation: sending @escaping () async -> Success
    ) -> Task<Success, Never> {
        Task(executorPreference: currentTaskExecutor(), priority: priority, operation: operation)
    }
}

/// The task executor the running task prefers, or nil (none, or not in a task).
private func currentTaskExecutor() -> (any TaskExecutor)? {
    withUnsafeCurrentTask { $0?.unownedTaskExecutor?.asTaskExecutor() }
}
