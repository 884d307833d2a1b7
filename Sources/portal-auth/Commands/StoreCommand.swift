import ArgumentParser

/// `portal-auth store`: where the credentials live.
struct StoreCommand: AsyncParsableCommand {
    /// The commands under `portal-auth store`; add a new command here.
    static let subcommands: [any ParsableCommand.Type] = [
        StoreMigrateCommand.self
    ]

    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Manage where stored credentials live: the desktop keyring or the private store file.",
        discussion: """
            Tokens live in the desktop keyring (the Secret Service: GNOME Keyring, KWallet, KeePassXC) when one \
            answers and is unlocked, with the store file as their index (no secret in it); else in the store file \
            $XDG_STATE_HOME/portal-auth/credentials.json (0600). `portal-auth status` says which. --store or \
            $PORTAL_AUTH_STORE (auto, keyring, file, or a path) forces one.
            """,
        subcommands: subcommands
    )
}
