import ArgumentParser
import Foundation
import PortalAuth

/// The values of `--portal`, `--client-id`, `--iap`, `--url` and `--name`, whichever parser read them
/// (`CredentialSelection` for ArgumentParser, `FastCommandLine` for `token` and `refresh`), and the rules that
/// turn them into a `SignInQuery` (which `SignInSelection` then resolves in the store).
struct SelectionArguments: Equatable {
    var portal: String?
    var clientID: String?
    var iap: String?
    var url: String?
    var name: String?

    /// Checks that the values name at most one sign-in; throws the `ValidationError` the command reports.
    func validate() throws {
        let given = [
            portal.map { _ in "--portal" }, iap.map { _ in "--iap" }, url.map { _ in "--url" },
            name.map { _ in "--name" },
        ]
        .compactMap { $0 }
        guard given.count <= 1 else {
            throw ValidationError("give only one of \(given.joined(separator: ", ")); they each pick a sign-in")
        }
        if clientID != nil && portal == nil { throw ValidationError("--client-id goes with --portal") }
        if let portal, Self.httpURL(portal) == nil {
            throw ValidationError(
                "--portal" + MessagePart.given(" \"", portal, "\"")
                    + " is not an absolute http or https URL; write it like https://www.arcgis.com")
        }
        if let url, Self.httpURL(url) == nil {
            throw ValidationError(
                "--url" + MessagePart.given(" \"", url, "\"")
                    + " is not an absolute http or https URL; write it like https://maps.contoso.com/portal/sharing/rest"
            )
        }
        if let iap, iap.isEmpty { throw ValidationError("--iap needs the path of the IAP configuration file") }
        if let name, !SignInPreferences.isValidName(name) {
            throw ValidationError(
                "--name" + MessagePart.given(" \"", name, "\"")
                    + " is not a sign-in name: letters, digits and any of -_.@ (up to 64)")
        }
    }

    /// The selection (call after `validate()`); `.automatic` when nothing was given.
    var target: SignInQuery {
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
