package import Foundation
import Glibc

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

    /// Whether the URL says `localhost` (both address families are bound).
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
                text, reason: "its scheme is \(scheme); a loopback redirect is received over plain http (RFC 8252 §7.3)")
        }
        guard let loopbackHost = Self.loopbackHost(host) else {
            throw .notLoopback(
                text,
                reason: "\(host) is not a loopback address; the response can only be received on 127.0.0.1, [::1] or "
                    + "localhost (RFC 8252 §7.3)")
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
        /// `localhost`: both address families.
        case localhost
        /// One loopback address.
        case address(Address)
    }

    /// What a loopback host names, or nil for any other host. Accepts `localhost` (any case), dotted IPv4 in
    /// 127.0.0.0/8, and `::1` (with or without brackets).
    static func loopbackHost(_ host: String) -> LoopbackHost? {
        var bare = host
        if bare.hasPrefix("["), bare.hasSuffix("]") { bare = String(bare.dropFirst().dropLast()) }
        if bare.lowercased() == "localhost" { return .localhost }
        var ipv4 = in_addr()
        if inet_pton(AF_INET, bare, &ipv4) == 1 {
            return UInt32(bigEndian: ipv4.s_addr) >> 24 == 127 ? .address(.ipv4(bare)) : nil
        }
        var ipv6 = in6_addr()
        if inet_pton(AF_INET6, bare, &ipv6) == 1 {
            let loopback = withUnsafeBytes(of: in6addr_loopback) { Array($0) }
            return withUnsafeBytes(of: ipv6) { Array($0) } == loopback ? .address(.ipv6Loopback) : nil
        }
        return nil
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
