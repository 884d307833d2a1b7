import PortalAuth

extension Failure {
    /// Whether `error` is an interruption (Ctrl-C, SIGTERM) rather than a failure.
    static func isInterruption(_ error: any Error) -> Bool {
        error is CancellationError || (error as? any CategorizedError)?.category == .cancelled
    }
}
