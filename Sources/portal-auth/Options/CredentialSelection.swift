import ArgumentParser
import Foundation

/// Which stored sign-in a command works on: `--portal URL [--client-id ID]`, `--iap FILE` or `--url URL`.
struct CredentialSelection: ParsableArguments {
    @Option(help: ArgumentHelp("The portal signed in to with `portal-auth login`.", valueName: "url"))
    var portal: String?

    @Option(name: .customLong("client-id"), help: ArgumentHelp(
        "With --portal: the app's client ID (needed only when several apps are signed in to the portal).", valueName: "id"))
    var clientID: String?

    @Option(help: ArgumentHelp("The IAP configuration file signed in with `portal-auth iap login`.", valueName: "file"))
    var iap: String?

    @Option(help: ArgumentHelp(
        "A URL to call: picks the stored sign-in whose portal or hosts_behind_proxy covers it.", valueName: "url"))
    var url: String?

    /// What was selected, after validation.
    enum Target {
        case portal(URL, clientID: String?)
        case iap(file: URL)
        case url(URL)
    }

    /// The values, for the rules in `SelectionArguments` (which the fast path of `token` and `refresh` calls too).
    var arguments: SelectionArguments { SelectionArguments(portal: portal, clientID: clientID, iap: iap, url: url) }

    func validate() throws {
        try arguments.validate()
    }

    /// The selection (call after validation).
    var target: Target { arguments.target }
}
