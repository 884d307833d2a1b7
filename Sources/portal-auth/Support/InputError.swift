import PortalAuth

/// A secret the tool could not read: no terminal to ask on, nothing on standard input, an unreadable file.
/// The message names where the secret was looked for, never the secret.
struct InputError: CategorizedError, CustomStringConvertible {
    let category: ErrorCategory
    let description: String

    /// Nothing to read, or no way to ask (exit 64).
    static func usage(_ message: String) -> InputError { InputError(category: .usage, description: message) }
    /// A file that cannot be read (exit 66).
    static func unreadable(_ message: String) -> InputError { InputError(category: .unreadableInput, description: message) }
    /// The person cancelled the prompt (exit 130).
    static let cancelled = InputError(category: .cancelled, description: "cancelled")
}
