import PortalAuth
import Synchronization

/// The error a command reported, kept so that `--format json` can repeat it as a JSON object on stdout.
enum ErrorReport {
    /// The message and category of the last error reported (by `Failure.report` or the argument parser).
    static let last = Mutex<(message: String, category: ErrorCategory)?>(nil)

    /// Whether a command already printed its JSON document on stdout (then a failure adds no second one: the
    /// exit status and standard error tell it).
    static let printedJSON = Mutex(false)

    /// The commands the last error reported suggested (`SuggestingCommand`): the one to run, and another.
    static let suggested = Mutex<(command: String?, alternative: String?)>((nil, nil))

    /// Records an error reported on standard error.
    static func record(_ message: String, category: ErrorCategory) {
        last.withLock { $0 = (message, category) }
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

    /// `{"error": {"status": 77, "category": "refused", "message": "…", "command": …, "alternative_command": …}}`:
    /// what `--format json` prints on stdout when a command fails (the message is also on standard error, and never
    /// holds a token). `command` is the command the message suggests, `{"argv": […], "shell": "…"}`, or null;
    /// `alternative_command` another that would do (the same command with `--interactive`), or null.
    static func json(status: Int32, message: String, category: ErrorCategory) -> JSONValue {
        let commands = suggested.withLock { $0 }
        return .object(["error": .object([
            "status": .integer(Int64(status)),
            "category": .string(name(of: category)),
            "message": .string(message),
            "command": SuggestedCommand.json(commands.command),
            "alternative_command": SuggestedCommand.json(commands.alternative),
        ])])
    }

    /// Whether the command line asks for JSON output (`--format json` or `--format=json`).
    static func wantsJSON(_ arguments: [String]) -> Bool {
        if arguments.contains("--format=json") { return true }
        return zip(arguments, arguments.dropFirst()).contains { $0 == "--format" && $1 == "json" }
    }
}
