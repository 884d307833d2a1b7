import ArgumentParser
import Foundation
import PortalAuth

/// Which stored sign-in a command works on: `--portal URL [--client-id ID]`, `--iap FILE`, `--url URL`,
/// `--name NAME`, or nothing (the only stored sign-in, else the default one; see `portal-auth use`).
struct CredentialSelection: ParsableArguments {
    @Option(
        help: ArgumentHelp("The portal signed in to with `portal-auth login`.", valueName: "url"),
        completion: .custom { _, _, _ in StoredNames.portals() })
    var portal: String?

    @Option(
        name: .customLong("client-id"),
        help: ArgumentHelp(
            "With --portal: the app's client ID (needed only when several apps are signed in to the portal).",
            valueName: "id"))
    var clientID: String?

    @Option(
        help: ArgumentHelp(
            "The IAP configuration file signed in with `portal-auth iap login` (or a copy of it).", valueName: "file"),
        completion: .file(extensions: ["json"]))
    var iap: String?

    @Option(
        help: ArgumentHelp(
            "A URL to call: picks the stored sign-in whose portal or hosts_behind_proxy covers it.", valueName: "url"))
    var url: String?

    @Option(
        help: ArgumentHelp("The sign-in given this name (`portal-auth name`, `login --name`).", valueName: "name"),
        completion: .custom { _, _, _ in StoredNames.names() })
    var name: String?

    /// What was selected, after validation.
    typealias Target = SignInQuery

    /// The values, for the rules in `SelectionArguments` (which the fast path of `token` and `refresh` calls too).
    var arguments: SelectionArguments {
        SelectionArguments(portal: portal, clientID: clientID, iap: iap, url: url, name: name)
    }

    func validate() throws {
        try arguments.validate()
    }

    /// The selection (call after validation).
    var target: Target { arguments.target }

    /// The selection as command-line words (for printed commands); empty for the automatic choice.
    var words: [String] { arguments.words }

    /// `text` as an absolute http(s) URL with a host, or nil.
    static func httpURL(_ text: String) -> URL? { SelectionArguments.httpURL(text) }
}
