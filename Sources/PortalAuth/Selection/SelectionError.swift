/// Why the stored sign-in a command should use cannot be picked.
import PortalAuthCore

package struct SelectionError: Error, Sendable, CustomStringConvertible, CategorizedError {
    /// What went wrong, for the tool's own wording (its options).
    package enum Code: Sendable, Equatable {
        case ambiguous(choices: [String])
        case unknownName(String, known: [String])
        case unreadablePreferences(String)
        case configurationChanged(file: String, differences: [String])
        case untrustedConfiguration(ConfigurationError)
    }

    /// The case.
    package let code: Code

    /// Several sign-ins are stored and none is the default: `choices` are their descriptions.
    package static func ambiguous(choices: [String]) -> SelectionError {
        SelectionError(code: .ambiguous(choices: choices))
    }
    /// No sign-in has the name given.
    package static func unknownName(_ name: String, known: [String]) -> SelectionError {
        SelectionError(code: .unknownName(name, known: known))
    }
    /// The preferences file cannot be read.
    package static func unreadablePreferences(_ path: String) -> SelectionError {
        SelectionError(code: .unreadablePreferences(path))
    }

    /// The sign-in stored for the IAP configuration file at `file` was made with another identity provider or client
    /// than the file names now (`differences` say which), and no sign-in to the file's provider and client is stored.
    package static func configurationChanged(file: String, differences: [String]) -> SelectionError {
        SelectionError(code: .configurationChanged(file: file, differences: differences))
    }

    /// The IAP configuration file named can be changed by another user (`ConfigurationError.Kind.untrustedFile`).
    package static func untrustedConfiguration(_ error: ConfigurationError) -> SelectionError {
        SelectionError(code: .untrustedConfiguration(error))
    }

    /// The configuration file and what differs, for `configurationChanged`; nil for the other cases.
    package var configurationChange: (file: String, differences: [String])? {
        if case .configurationChanged(let file, let differences) = code { return (file, differences) }
        return nil
    }

    package var category: ErrorCategory {
        switch code {
        case .configurationChanged: return .refused
        case .untrustedConfiguration(let error): return error.category
        case .ambiguous, .unknownName: return .usage
        case .unreadablePreferences: return .invalidContent
        }
    }

    package var description: String {
        switch code {
        case .ambiguous(let choices):
            let listed = choices.compactMap { MessagePart.given("    ", $0) }.filter { !$0.isEmpty }
            return
                "\(choices.count > 1 ? "\(choices.count) sign-ins are" : "several sign-ins are") stored and none is the "
                + "default; say which (a portal, an IAP configuration file, a URL or a name), or make one the default"
                + (listed.isEmpty ? "" : ":\n" + listed.joined(separator: "\n"))
        case .unknownName(let name, let known):
            let names = known.filter { !$0.isEmpty }
            let list = names.isEmpty ? "no sign-in has a name yet" : "the names are \(names.joined(separator: ", "))"
            return
                (name.isEmpty
                ? "a sign-in name is needed"
                : "no stored sign-in is named \"\(DisplayText.neutralised(name, limit: 80))\"") + "; \(list)"
        case .configurationChanged(let file, let differences):
            let changes = differences.filter { !$0.isEmpty }.joined(separator: "; ")
            return
                "the IAP configuration\(MessagePart.given(" ", DisplayText.path(file))) has changed since the sign-in "
                + "stored for it\(MessagePart.given(": ", changes))"
                + "; the stored tokens are for the sign-in's app registration, not the file's: sign in again with the file"
        case .untrustedConfiguration(let error):
            return error.description
        case .unreadablePreferences(let path):
            return
                "\(MessagePart.or(DisplayText.path(path), "the preferences file")) is not a portal-auth preferences file "
                + "(JSON with default, names and apps); delete it to start over"
        }
    }
}
