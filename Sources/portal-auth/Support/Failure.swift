import ArgumentParser
import PortalAuth
import Synchronization

/// Reports a failed command on standard error and turns it into the matching exit status.
enum Failure {
    /// Prints `error` (with `hint` when given) and returns the exit code to throw.
    static func report(_ error: any Error, hint: String? = nil) -> ExitCode {
        if error is ExitCode { return error as! ExitCode }
        let category = self.category(of: error)
        // A countdown line may still be on the terminal: start the report on a clean line.
        if StandardError.isTerminal { StandardError.write("\r\u{1B}[2K") }
        if category == .cancelled {
            StandardError.line("portal-auth: interrupted; nothing was changed.")
            ErrorReport.record("interrupted; nothing was changed", category: category)
        } else {
            // The library's errors speak to apps; the tool words them with its options.
            let message = ErrorReport.message(for: error)
            StandardError.line("portal-auth: error: \(message)")
            if let hint { StandardError.line(hint) }
            ErrorReport.record(message + (hint.map { "\n\($0)" } ?? ""), category: category)
            if let suggesting = error as? any SuggestingCommand {
                ErrorReport.suggested.withLock { $0 = (suggesting.suggestedCommand, suggesting.alternativeCommand) }
            }
        }
        return ExitStatus.exitCode(for: category)
    }

    /// The kind of failure `error` is: its own category, `.cancelled` for a cancellation, else `.local`.
    static func category(of error: any Error) -> ErrorCategory {
        if let categorized = error as? any CategorizedError { return categorized.category }
        return error is CancellationError ? .cancelled : .local
    }

    /// Runs `operation` in a task that Ctrl-C (or SIGTERM) cancels.
    ///
    /// The signal watcher is installed before the task starts, so an interrupt at any moment cancels
    /// the operation instead of killing the process with the port still bound.
    static func cancellableOnInterrupt<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws
        -> T
    {
        let pending = PendingInterrupt()
        let watcher = InterruptWatcher { pending.interrupt() }
        defer { withExtendedLifetime(watcher) {} }
        // On the executor the command runs on (the calling thread for `token` and `refresh`).
        let task = Task.keepingExecutor { try await operation() }
        pending.started { task.cancel() }
        do {
            return try await task.value
        } catch {
            // Whatever the cancelled operation reports (a wait cut short can surface as a time-out on a
            // loaded machine), after Ctrl-C the outcome is the interruption: exit 130.
            if pending.interrupted { throw CancellationError() }
            throw error
        }
    }
}

extension Failure {
    /// Whether `error` is an interruption (Ctrl-C, SIGTERM) rather than a failure.
    static func isInterruption(_ error: any Error) -> Bool {
        error is CancellationError || (error as? any CategorizedError)?.category == .cancelled
    }
}

/// An error with a line of advice after it, of the same category.
struct Advised: CategorizedError, CustomStringConvertible {
    let error: any CategorizedError
    let advice: String
    var category: ErrorCategory { error.category }
    var description: String { ErrorReport.message(for: error) + MessagePart.given("\n", advice) }
}

/// A request that only turns out to be wrong once the stored sign-in is known (`--id-token` for a portal
/// sign-in): a usage error (exit 64) found after parsing, where `ValidationError` no longer applies.
struct UsageProblem: CategorizedError, CustomStringConvertible {
    let description: String
    var category: ErrorCategory { .usage }
}

/// A secret the tool could not read: no terminal to ask on, nothing on standard input, an unreadable file.
/// The message names where the secret was looked for, never the secret.
struct InputError: CategorizedError, CustomStringConvertible {
    let category: ErrorCategory
    let description: String

    /// Nothing to read, or no way to ask (exit 64).
    static func usage(_ message: String) -> InputError { InputError(category: .usage, description: message) }
    /// A file that cannot be read (exit 66).
    static func unreadable(_ message: String) -> InputError {
        InputError(category: .unreadableInput, description: message)
    }
    /// The person cancelled the prompt (exit 130).
    static let cancelled = InputError(category: .cancelled, description: "cancelled")
}
