import ArgumentParser
import Foundation
import PortalAuth

/// Options of every command that talks to a server.
struct TransportOptions: ParsableArguments {
    @Option(
        name: .customLong("ca-bundle"),
        help: ArgumentHelp(
            "PEM file of certificate authorities to trust (for TLS interception) (default: $PORTAL_AUTH_CA_BUNDLE, then "
                + "$CURL_CA_BUNDLE, $SSL_CERT_FILE, else the system's).",
            valueName: "file"))
    var caBundle: String?

    func validate() throws {
        try Self.validate(caBundle: caBundle)
    }

    /// The HTTP client with the CA bundle setting.
    var httpClient: CurlHTTPClient { Self.httpClient(caBundle: caBundle) }

    /// Checks `--ca-bundle` (also for `SessionArguments`, which the fast path of `token` and `refresh` fills in).
    static func validate(caBundle: String?) throws {
        if let caBundle, !FileManager.default.isReadableFile(atPath: caBundle) {
            throw ValidationError(
                "--ca-bundle" + MessagePart.given(" ", caBundle)
                    + " is not a readable file; give the path of a PEM bundle")
        }
    }

    /// The HTTP client with the CA bundle setting `caBundle`.
    static func httpClient(caBundle: String?) -> CurlHTTPClient {
        var configuration = TransportConfiguration()
        if let caBundle { configuration.tls.caBundle = URL(fileURLWithPath: caBundle) }
        return CurlHTTPClient(configuration: configuration)
    }
}
