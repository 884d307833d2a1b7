import PortalAuth

/// Nothing usable is stored for what the command asked for: only an interactive sign-in can help (exit 77).
///
/// The message says why and gives the exact command that signs in; it never holds a token.
struct SignInNeeded: CategorizedError, CustomStringConvertible {
    /// Why a sign-in is needed ("no stored sign-in for the portal …").
    let reason: String
    /// The command that signs in, ready to paste; nil when it cannot be told (`--url` matching nothing).
    let command: String?
    /// This command again with `--interactive` (and what else it needs, such as `--client-id`), ready to paste;
    /// nil when `--interactive` could not sign in from it.
    var interactiveCommand: String? = nil
    /// What to do when no command can be told, instead of the general advice.
    var hint: String? = nil
    /// The words before `command`, a sentence that ends with it ("If this host is behind …, sign in with").
    var commandLead = "Sign in with"
    /// The words before `interactiveCommand`, which say what that command does besides signing in.
    var interactiveLead = "or sign in and print the token at once with"

    var category: ErrorCategory { .refused }

    var description: String {
        // An empty reason, command or hint leaves its words out (issue 45).
        let reason = MessagePart.or(reason, "A sign-in is needed")
        let interactiveCommand = MessagePart.nonBlank(interactiveCommand)
        guard let command = MessagePart.nonBlank(command) else {
            if let hint = MessagePart.nonBlank(hint) { return "\(reason). \(hint)" }
            if let interactiveCommand { return "\(reason). \(commandLead):\n    \(interactiveCommand)" }
            return "\(reason). Sign in with `portal-auth login --portal URL --client-id ID` "
                + "or `portal-auth iap login --config FILE` first."
        }
        return "\(reason). \(commandLead):\n    \(command)"
            + (interactiveCommand.map { "\n\(interactiveLead):\n    \($0)" } ?? "")
    }
}
