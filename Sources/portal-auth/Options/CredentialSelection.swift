import ArgumentParser
import Foundation
import PortalAuth

/// Which stored sign-in a command works on: `--portal URL [--client-id ID]`, `--iap FILE`, `--url URL`,
/// `--name NAME`, or nothing (the only stored sign-in, else the default one; see `portal-auth use`).
struct CredentialSelection: ParsableArguments {
    @Option(help: ArgumentHelp("The portal signed in to with `portal-auth login`.", valueName: "url"),
            completion: .custom { _, _, _ in StoredNames.portals() })
    var portal: String?

    @Option(name: .customLong("client-id"), help: ArgumentHelp(
        "With --portal: the app's client ID (needed only when several apps are signed in to the portal).", valueName: "id"))
    var clientID: String?

    @Option(help: ArgumentHelp("The IAP configuration file signed in with `portal-auth iap login` (or a copy of it).", valueName: "file"),
            completion: .file(extensions: ["json"]))
    var iap: String?

    @Option(help: ArgumentHelp(
        "A URL to call: picks the stored sign-in whose portal or hosts_behind_proxy covers it.", valueName: "url"))
    var url: String?

    @Option(help: ArgumentHelp("The sign-in given this name (`portal-auth name`, `login --name`).", valueName: "name"),
            completion: .custom { _, _, _ in StoredNames.names() })
    var name: String?

    /// What was selected, after validation.
    typealias Target = SignInQuery

    func validate() throws {
        let given = [portal.map { _ in "--portal" }, iap.map { _ in "--iap" }, url.map { _ in "--url" }, name.map { _ in "--name" }]
            .compactMap { $0 }
        guard given.count <= 1 else {
            throw ValidationError("give only one of \(given.joined(separator: ", ")); they each pick a sign-in")
        }
        if clientID != nil && portal == nil { throw ValidationError("--client-id goes with --portal") }
        if let portal, Self.httpURL(portal) == nil {
            throw ValidationError("--portal \"\(portal)\" is not an absolute http or https URL; write it like https://www.arcgis.com")
        }
        if let url, Self.httpURL(url) == nil {
            throw ValidationError("--url \"\(url)\" is not an absolute http or https URL; write it like https://maps.contoso.com/portal/sharing/rest")
        }
        if let iap, iap.isEmpty { throw ValidationError("--iap needs the path of the IAP configuration file") }
        if let name, !SignInPreferences.isValidName(name) {
            throw ValidationError("--name \"\(name)\" is not a sign-in name: letters, digits, - _ . @ (up to 64)")
        }
    }

    /// The selection (call after validation).
    var target: Target {
        if let portal, let parsed = Self.httpURL(portal) { return .portal(parsed, clientID: clientID) }
        if let iap { return .iap(file: URL(fileURLWithPath: iap)) }
        if let url, let parsed = Self.httpURL(url) { return .url(parsed) }
        if let name { return .name(name) }
        return .automatic
    }

    /// The selection as command-line words (for printed commands); empty for the automatic choice.
    var words: [String] {
        if let portal { return ["--portal", portal] + (clientID.map { ["--client-id", $0] } ?? []) }
        if let iap { return ["--iap", iap] }
        if let url { return ["--url", url] }
        if let name { return ["--name", name] }
        return []
    }

    /// `text` as an absolute http(s) URL with a host, or nil.
    static func httpURL(_ text: String) -> URL? {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host, !host.isEmpty
        else { return nil }
        return url
    }
}
