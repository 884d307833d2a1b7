package import Foundation
import Glibc
import PortalAuthTransport

/// What a loopback redirect URL asks for: the addresses to bind, the port, the path to answer on, and the URL's own
/// spelling (kept, so the `redirect_uri` sent says `localhost` when the registered one does).
package struct LoopbackEndpoint: Sendable, Equatable {
    /// A loopback address to bind.
    enum Address: Sendable, Equatable, CustomStringConvertible {
        /// An IPv4 address in 127.0.0.0/8, dotted.
        case ipv4(String)
        /// `::1`.
        case ipv6Loopback

        var description: String {
            switch self {
            case .ipv4(let dotted): dotted
            case .ipv6Loopback: "[::1]"
            }
        }
    }

    /// The redirect URL as given.
    let url: URL
    /// The addresses to bind: the first is required; a second (`::1` for `localhost`) only where available.
    let addresses: [Address]
    /// The port of the URL; 0 asks for an ephemeral port.
    let port: Int
    /// The percent-encoded path to answer on (`/` when the URL has none).
    let path: String

    /// Whether the URL says `localhost` or a name under it (both address families are bound).
    var isLocalhost: Bool { addresses.count > 1 }

    // MARK: - Parsing

    /// Checks that `url` is an `http` URL on a loopback host and reads what to bind.
    package init(redirectURL url: URL) throws(LoopbackError) {
        let text = url.absoluteString
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            throw .invalidRedirectURL(text, reason: "it is not a valid URL")
        }
        guard let scheme = components.scheme?.lowercased(), let host = components.host, !host.isEmpty else {
            throw .notLoopback(text, reason: "it is not an absolute http URL with a host")
        }
        guard scheme == "http" else {
            throw .notLoopback(
                text, reason: "its scheme is \(scheme); a loopback redirect is received over plain http (RFC 8252 §7.3)"
            )
        }
        guard let loopbackHost = Self.loopbackHost(host) else {
            throw .notLoopback(
                text,
                reason: "\(host) is not a loopback address; the response can only be received on 127.0.0.1, [::1], "
                    + "localhost or a name under it (RFC 8252 §7.3, RFC 6761 §6.3)")
        }
        guard components.user == nil, components.password == nil else {
            throw .invalidRedirectURL(text, reason: "it contains a user name or password")
        }
        guard components.fragment == nil else {
            throw .invalidRedirectURL(text, reason: "it contains a fragment (#…), which OAuth does not allow")
        }
        let port = components.port ?? 0
        guard (0...65535).contains(port) else {
            throw .invalidRedirectURL(text, reason: "its port \(port) is not between 0 and 65535")
        }
        self.url = url
        switch loopbackHost {
        case .localhost: self.addresses = [.ipv4("127.0.0.1"), .ipv6Loopback]
        case .address(let address): self.addresses = [address]
        }
        self.port = port
        self.path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
    }

    /// The redirect URL with `port` in place of the given one (host spelling, path and query kept).
    func url(withPort port: Int) -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url }
        components.port = port
        return components.url ?? url
    }

    // MARK: - Hosts

    /// A host that names the loopback interface.
    enum LoopbackHost: Sendable, Equatable {
        /// `localhost` or a name under it (`auth.localhost`): both address families.
        case localhost
        /// One loopback address.
        case address(Address)
    }

    /// What a loopback host names, or nil for any other host, by the library's one loopback rule
    /// (`URLNormalization.loopbackHost(_:)`: `localhost` and `*.localhost`, 127.0.0.0/8, `::1`).
    static func loopbackHost(_ host: String) -> LoopbackHost? {
        switch URLNormalization.loopbackHost(host) {
        case .name: .localhost
        case .ipv4(let dotted): .address(.ipv4(dotted))
        case .ipv6: .address(.ipv6Loopback)
        case nil: nil
        }
    }

    /// Whether the value of a `Host` header names a loopback host (port allowed): a request naming another host
    /// reached the listener by DNS rebinding or by mistake.
    package static func isLoopbackHostHeader(_ value: String) -> Bool {
        var host = Substring(value)
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return false }
            host = host[...close]
        } else if let colon = host.firstIndex(of: ":") {
            host = host[..<colon]
        }
        return loopbackHost(String(host)) != nil
    }
}
