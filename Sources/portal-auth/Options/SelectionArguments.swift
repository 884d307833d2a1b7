import ArgumentParser
import Foundation

/// The values of `--portal`, `--client-id`, `--iap` and `--url`, whichever parser read them (`CredentialSelection`
/// for ArgumentParser, `FastCommandLine` for `token` and `refresh`), and the rules that pick a sign-in from them.
struct SelectionArguments: Equatable {
    var portal: String?
    var clientID: String?
    var iap: String?
    var url: String?

    /// Checks that the values name one sign-in; throws the `ValidationError` the command reports.
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

    /// The selection (call after `validate()`).
    var target: CredentialSelection.Target {
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
