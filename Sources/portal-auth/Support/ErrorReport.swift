import PortalAuth
import Synchronization

/// The error a command reported, kept so that `--format json` can repeat it as a JSON object on stdout.
enum ErrorReport {
    /// The message and category of the last error reported (by `Failure.report` or the argument parser).
    static let last = Mutex<(message: String, category: ErrorCategory)?>(nil)

    /// Whether a command already printed its JSON document on stdout (then a failure adds no second one: the
    /// exit status and standard error tell it).
    static let printedJSON = Mutex(false)

    /// Records an error reported on standard error.
    static func record(_ message: String, category: ErrorCategory) {
        last.withLock { $0 = (message, category) }
    }

    /// A usage error (the argument parser's, or a command's `ValidationError`) made safe for the terminal, as other
    /// untrusted text is: each argument value it quotes is shown as `DisplayText.path` shows it (every control
    /// character, line breaks included, a visible escape such as `\u{1B}`), and so is any control character left in
    /// a line (a value the message cut short); the message's own lines stay lines.
    static func escapingArguments(_ message: String, arguments: [String]) -> String {
        var text = message
        let values = arguments + arguments.compactMap { $0.hasPrefix("--") ? $0.split(separator: "=", maxSplits: 1).dropFirst().first.map(String.init) : nil }
        for value in Set(values) where DisplayText.containsControlCharacters(value) {
            text = text.replacing(value, with: DisplayText.path(value))
        }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { DisplayText.path(String($0)) }.joined(separator: "\n")
    }

    /// The category's name in JSON errors: `usage`, `invalid_content`, `unreadable_input`, `unavailable`, `local`,
    /// `timed_out`, `refused`, `cancelled`.
    static func name(of category: ErrorCategory) -> String {
        switch category {
        case .usage: return "usage"
        case .invalidContent: return "invalid_content"
        case .unreadableInput: return "unreadable_input"
        case .unavailable: return "unavailable"
        case .local: return "local"
        case .timedOut: return "timed_out"
        case .refused: return "refused"
        case .cancelled: return "cancelled"
        }
    }

    /// `{"error": {"status": 77, "category": "refused", "message": "…"}}`: what `--format json` prints on stdout
    /// when a command fails (the message is also on standard error, and never holds a token).
    static func json(status: Int32, message: String, category: ErrorCategory) -> JSONValue {
        .object(["error": .object([
            "status": .integer(Int64(status)),
            "category": .string(name(of: category)),
            "message": .string(message),
        ])])
    }

    /// Whether the command line asks for JSON output (`--format json` or `--format=json`).
    static func wantsJSON(_ arguments: [String]) -> Bool {
        if arguments.contains("--format=json") { return true }
        return zip(arguments, arguments.dropFirst()).contains { $0 == "--format" && $1 == "json" }
    }
}
