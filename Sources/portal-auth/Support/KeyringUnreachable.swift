import PortalAuth

/// Stored sign-ins keep their tokens in the desktop keyring, and the keyring cannot be reached from here: a cron job,
/// a systemd service or a CI job gets no desktop session (no `DBUS_SESSION_BUS_ADDRESS`). Exit 70, naming the
/// sign-ins and the fixes — never "No stored sign-ins" (issue 45).
struct KeyringUnreachable: CategorizedError, CustomStringConvertible {
    /// The store keys of the sign-ins whose tokens are in the keyring.
    let keys: [String]
    /// Why the keyring cannot be used.
    let problem: KeyringError

    var category: ErrorCategory { .local }

    var description: String {
        let keys = self.keys.filter { !$0.isEmpty }
        let count = keys.count
        let listed = keys.prefix(10).map { "\n    \(DisplayText.path($0))" }
        let why = MessagePart.given(": ", DisplayText.neutralised(ErrorReport.toolWords(problem.message), limit: 300))
        return
            (count == 0
            ? "Stored sign-ins keep their" : "\(count) stored sign-in\(count == 1 ? " keeps its" : "s keep their")")
            + " tokens in the desktop keyring, which cannot be reached now\(why)."
            + listed.joined() + (count > 10 ? "\n    and \(count - 10) more" : "") + "\n"
            + "Cron jobs, systemd services and CI jobs get no desktop session. Any of these fixes it:\n"
            + "  - reach the user's keyring (the desktop session running, its keyring unlocked): set\n"
            + "    DBUS_SESSION_BUS_ADDRESS=unix:path=$XDG_RUNTIME_DIR/bus (XDG_RUNTIME_DIR is /run/user/$(id -u))\n"
            + "  - move the tokens into the private store file, once, from the desktop session:\n"
            + "    portal-auth store migrate --to file\n"
            + "  - sign in for the jobs into a file store of their own, and run them with the same --store:\n"
            + "    portal-auth iap login --store ~/.local/state/portal-auth/jobs.json … (or PORTAL_AUTH_STORE=that path;\n"
            + "    --store file alone is moved back into the keyring at the desktop's next refresh)"
    }
}
