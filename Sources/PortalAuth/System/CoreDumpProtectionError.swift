/// Core dumps could not be disabled (see `CoreDumpProtection.disable()`).
public struct CoreDumpProtectionError: Error, Sendable, CustomStringConvertible, CategorizedError {
    /// The calls that failed, each with its `errno` text.
    public let failures: [String]

    public var category: ErrorCategory { .local }
    public var description: String {
        "core dumps could not be disabled (\(failures.joined(separator: "; "))); a crash could leave tokens in a core file"
    }
}
