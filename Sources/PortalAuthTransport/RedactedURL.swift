package import Foundation

/// A URL as it may appear in messages and logs: scheme, host, port and path, without user information,
/// query or fragment, which can hold codes, tokens and passwords.
package struct RedactedURL: Sendable, Equatable, CustomStringConvertible {
    /// The redacted text, e.g. `https://portal.example.com/sharing/rest/oauth2/token`.
    public let description: String

    /// Redacts `url`.
    public init(_ url: URL) {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true), components.host != nil else {
            // Not a URL with an authority: keep what comes before any query or fragment.
            let text = url.absoluteString
            let end = text.firstIndex { $0 == "?" || $0 == "#" } ?? text.endIndex
            let head = String(text[..<end])
            description = head.contains("@") ? "<URL with user information>" : head
            return
        }
        components.user = nil
        components.password = nil
        components.query = nil
        components.fragment = nil
        description = components.string ?? "<unprintable URL>"
    }
}
