import ArgumentParser
import Foundation
import PortalAuth

/// Which URL scheme `register-scheme` and `unregister-scheme` work on: named, or the scheme of an IAP file's
/// redirect_url.
struct SchemeSelection: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "An IAP configuration file whose redirect_url has the scheme (my-maps-app://auth).", valueName: "file"))
    var config: String?

    @Option(help: ArgumentHelp("The URL scheme, e.g. my-maps-app.", valueName: "name"))
    var scheme: String?

    func validate() throws {
        guard config != nil || scheme != nil else {
            throw ValidationError("give --config FILE (an IAP file with a custom-scheme redirect_url) or --scheme NAME")
        }
        if let scheme, !CustomSchemeRedirect.isValidScheme(scheme.lowercased()) {
            throw ValidationError(
                "--scheme" + MessagePart.given(" \"", scheme, "\"")
                    + " is not a URL scheme; give the part before ://, e.g. my-maps-app")
        }
    }

    /// The schemes named (both options may name the same one).
    func schemes() async throws -> [String] {
        var schemes: [String] = []
        if let config {
            let configuration = try await IAPConfiguration.configuration(from: URL(fileURLWithPath: config))
            guard let redirect = CustomSchemeRedirect(configuration.redirectURL) else {
                throw UsageProblem(
                    description:
                        "the redirect_url of \(DisplayText.path(config)) (\(configuration.redirectURL.absoluteString)) has no custom scheme; "
                        + "only a custom-scheme redirect such as my-maps-app://auth needs a registered handler.")
            }
            schemes.append(redirect.scheme)
        }
        if let scheme, !schemes.contains(scheme.lowercased()) { schemes.append(scheme.lowercased()) }
        return schemes
    }
}
