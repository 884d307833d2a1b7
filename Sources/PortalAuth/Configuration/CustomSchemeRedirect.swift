package import Foundation

/// A redirect URL with an application's own scheme, such as `my-maps-app://auth`, which the desktop hands to the
/// scheme's registered handler (a `.desktop` file with `MimeType=x-scheme-handler/my-maps-app;`).
///
/// The SDK's IAP files and OAuth configurations use such redirects; on a Linux desktop the handler forwards the
/// address to the waiting sign-in over a private socket (see ``SchemeRedirectForwarder``).
package struct CustomSchemeRedirect: Sendable, Hashable, CustomStringConvertible {
    /// Schemes that are never an application's own: the web, files, and the out-of-band URN.
    private static let reservedSchemes: Set<String> = [
        "http", "https", "file", "ftp", "data", "javascript", "about", "blob", "mailto", "urn", "ws", "wss",
    ]

    /// The redirect URL as registered.
    package let url: URL
    /// The scheme in lower case, e.g. `my-maps-app`.
    package let scheme: String

    /// The redirect when `url` has a custom scheme (RFC 3986 syntax, not http, https, file, …); nil otherwise.
    package init?(_ url: URL) {
        guard let scheme = url.scheme?.lowercased(), Self.isValidScheme(scheme), !Self.reservedSchemes.contains(scheme),
            url.fragment == nil, url.user == nil, url.password == nil
        else { return nil }
        self.url = url
        self.scheme = scheme
    }

    /// Whether `text` is a scheme name by RFC 3986 §3.1: a letter, then letters, digits, `+`, `-` or `.`.
    package static func isValidScheme(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic, text.count <= 64
        else {
            return false
        }
        return text.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII
                && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
                    || "+-.".unicodeScalars.contains(scalar))
        }
    }

    /// The MIME type the desktop uses for the scheme: `x-scheme-handler/my-maps-app`.
    package var mimeType: String { "x-scheme-handler/\(scheme)" }

    package var description: String { url.absoluteString }

    // MARK: - Matching received addresses

    /// The path and query of `text` as a request target for ``CallbackEvaluator``, when `text` is an address with
    /// this redirect's scheme and host; nil for another scheme or host (or an address that cannot be read).
    package func target(of text: String) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let withoutFragment = String(trimmed.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0])
        guard let received = URLComponents(string: withoutFragment),
            let expected = URLComponents(url: url, resolvingAgainstBaseURL: false),
            received.scheme?.lowercased() == scheme,
            (received.percentEncodedHost ?? "").lowercased() == (expected.percentEncodedHost ?? "").lowercased(),
            received.port == expected.port
        else { return nil }
        let path = received.percentEncodedPath.isEmpty ? "/" : received.percentEncodedPath
        return received.percentEncodedQuery.map { "\(path)?\($0)" } ?? path
    }

    /// The path the evaluator compares: the redirect's path, `/` when it has none.
    package var evaluatorPath: String {
        let path = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? ""
        return path.isEmpty ? "/" : path
    }

    // MARK: - Desktop session

    /// Whether a graphical desktop session is present (`DISPLAY` or `WAYLAND_DISPLAY` set), so a browser can hand
    /// a custom-scheme address to its handler; without one the final address has to be pasted back.
    package static func hasDesktopSession(environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
    }
}
