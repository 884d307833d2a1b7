/// What kind of failure an error is, so that a caller (the command-line tool among them) can react
/// without matching on messages.
///
/// The tool maps each category to a `sysexits.h` exit status.
public enum ErrorCategory: Sendable, Equatable {
    /// The request itself was wrong: an option, an argument, a URL given by the caller (exit 64).
    case usage
    /// A file or response had content that cannot be used (exit 65).
    case invalidContent
    /// An input file is missing or unreadable (exit 66).
    case unreadableInput
    /// The identity provider or a server was unreachable or failing (exit 69).
    case unavailable
    /// A local problem: the store, the file system, an internal error (exit 70/73/74).
    case local
    /// Waiting for the browser or a server took too long (exit 75).
    case timedOut
    /// The identity provider refused, or a sign-in is needed (exit 77).
    case refused
    /// The user interrupted or cancelled (exit 130).
    case cancelled
}

/// An error that knows its category.
public protocol CategorizedError: Error {
    /// The kind of failure.
    var category: ErrorCategory { get }
}
