import PortalAuth

/// Nothing usable is stored for what the command asked for: only an interactive sign-in can help (exit 77).
///
/// The message says why and gives the exact command that signs in; it never holds a token.
struct SignInNeeded: CategorizedError, CustomStringConvertible {
    /// Why a sign-in is needed ("no stored sign-in for the portal …").
    let reason: String
    /// The command that signs in, ready to paste; nil when it cannot be told (`--url` matching nothing).
    let command: String?
    /// Whether to mention that `--interactive` signs in from the same command.
    var offersInteractive = false
    /// What to do when no command can be told, instead of the general advice.
    var hint: String? = nil

    var category: ErrorCategory { .refused }

    var description: String {
        guard let command else {
            if let hint { return "\(reason). \(hint)" }
            return "\(reason). Sign in with `portal-auth login --portal URL --client-id ID` "
                + "or `portal-auth iap login --config FILE` first."
        }
        return "\(reason). Sign in with:\n    \(command)"
            + (offersInteractive ? "\n(or run this command again with --interactive)" : "")
    }
}
