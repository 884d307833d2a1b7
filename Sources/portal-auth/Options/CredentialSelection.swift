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

    func validate() throws {
        let given = [portal.map { _ in "--portal" }, iap.map { _ in "--iap" }, url.map { _ in "--url" }].compactMap { $0 }
        guard given.count == 1 else {
            throw ValidationError(given.isEmpty
                ? "say which sign-in: --portal URL [--client-id ID], --iap FILE or --url URL"
                : "give only one of \(given.joined(separator: ", ")); they each pick a sign-in")
        }
        if clientID != nil && portal == nil { throw ValidationError("--client-id goes with --portal") }
        if let portal, Self.httpURL(portal) == nil {
            throw ValidationError("--portal \"\(portal)\" is not an absolute http or https URL; write it like https://www.arcgis.com")
        }
        if let url, Self.httpURL(url) == nil {
            throw ValidationError("--url \"\(url)\" is not an absolute http or https URL; write it like https://maps.contoso.com/portal/sharing/rest")
        }
        if let iap, iap.isEmpty { throw ValidationError("--iap needs the path of the IAP configuration file") }
    }

    /// The selection (call after validation).
    var target: Target {
        if let portal, let parsed = Self.httpURL(portal) { return .portal(parsed, clientID: clientID) }
        if let iap { return .iap(file: URL(fileURLWithPath: iap)) }
        return .url(url.flatMap(Self.httpURL) ?? URL(fileURLWithPath: "/"))
    }

    /// `text` as an absolute http(s) URL with a host, or nil.
    private static func httpURL(_ text: String) -> URL? {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host, !host.isEmpty
        else { return nil }
        return url
    }
}
