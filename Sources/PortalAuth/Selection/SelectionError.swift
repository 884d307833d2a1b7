/// Why the stored sign-in a command should use cannot be picked.
import PortalAuthCore

package struct SelectionError: Error, Sendable, CustomStringConvertible, CategorizedError {
    /// What went wrong, for the tool's own wording (its options).
    package enum Code: Sendable, Equatable {
        case ambiguous(choices: [String])
        case unknownName(String, known: [String])
        case unreadablePreferences(String)
    }

    /// The case.
    package let code: Code

    /// Several sign-ins are stored and none is the default: `choices` are their descriptions.
    package static func ambiguous(choices: [String]) -> SelectionError { SelectionError(code: .ambiguous(choices: choices)) }
    /// No sign-in has the name given.
    package static func unknownName(_ name: String, known: [String]) -> SelectionError { SelectionError(code: .unknownName(name, known: known)) }
    /// The preferences file cannot be read.
    package static func unreadablePreferences(_ path: String) -> SelectionError { SelectionError(code: .unreadablePreferences(path)) }

    package var category: ErrorCategory {
        switch code {
        case .ambiguous, .unknownName: return .usage
        case .unreadablePreferences: return .invalidContent
        }
    }

    package var description: String {
        switch code {
        case .ambiguous(let choices):
            return "\(choices.count) sign-ins are stored and none is the default; say which (SignInQuery: a portal, an IAP "
                + "configuration file, a URL or a name), or make one the default (SignInPreferences):\n"
                + choices.map { "    \($0)" }.joined(separator: "\n")
        case .unknownName(let name, let known):
            let list = known.isEmpty ? "no sign-in has a name yet" : "the names are \(known.joined(separator: ", "))"
            return "no stored sign-in is named \"\(DisplayText.neutralised(name, limit: 80))\"; \(list)"
        case .unreadablePreferences(let path):
            return "\(path) is not a portal-auth preferences file (JSON with default, names and apps); delete it to start over"
        }
    }
}
