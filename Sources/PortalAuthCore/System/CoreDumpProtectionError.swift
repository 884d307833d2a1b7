/// Core dumps could not be disabled (see `CoreDumpProtection.disable()`).
package struct CoreDumpProtectionError: Error, Sendable, CustomStringConvertible, CategorizedError {
    /// The calls that failed, each with its `errno` text.
    package let failures: [String]

    package var category: ErrorCategory { .local }
    package var description: String {
        "core dumps could not be disabled (\(failures.joined(separator: "; "))); a crash could leave tokens in a core file"
    }
}
