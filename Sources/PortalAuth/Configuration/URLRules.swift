import Foundation
import Glibc

/// The URL rules shared by both configurations: what counts as loopback, how hosts and ports compare,
/// and what an endpoint URL must look like.
enum URLRules {
    // MARK: - Hosts and ports

    /// The host in lower case without a trailing dot (IPv6 literals without brackets), or `nil`.
    static func normalisedHost(of url: URL) -> String? {
        guard let host = url.host(percentEncoded: false), !host.isEmpty else { return nil }
        return normalisedHost(host)
    }

    /// `host` in lower case without one trailing dot and without IPv6 brackets.
    static func normalisedHost(_ host: String) -> String {
        var host = host.lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.hasSuffix("."), host.count > 1 { host.removeLast() }
        return canonicalIPv6(host) ?? host
    }

    /// The port the URL connects to: its explicit port, else 80 for http and 443 for https.
    static func effectivePort(of url: URL) -> Int? {
        if let port = url.port { return port }
        switch url.scheme?.lowercased() {
        case "http": return 80
        case "https": return 443
        default: return nil
        }
    }

    /// Whether `host` (normalised) is a loopback host: `localhost`, 127.0.0.0/8 or `::1`.
    static func isLoopbackHost(_ host: String) -> Bool {
        let host = normalisedHost(host)
        if host == "localhost" || host == "::1" { return true }
        var address = in_addr()
        guard inet_pton(AF_INET, host, &address) == 1 else { return false }
        // s_addr is in network byte order: the first octet is the lowest byte in memory.
        return withUnsafeBytes(of: &address) { $0.first == 127 }
    }

    /// The canonical text of an IPv6 address (`0:0::1` becomes `::1`), or `nil` when `text` is not one.
    static func canonicalIPv6(_ text: String) -> String? {
        guard text.contains(":") else { return nil }
        var address = in6_addr()
        guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count)) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether `url` can receive a loopback redirect on this machine: `http` to a loopback host.
    static func isLoopbackRedirect(_ url: URL) -> Bool {
        guard url.scheme?.lowercased() == "http", let host = normalisedHost(of: url) else { return false }
        return isLoopbackHost(host)
    }

    // MARK: - Rules

    /// Why `url` cannot be an endpoint (absolute http(s) with a host, no user or password, a valid port,
    /// https unless the host is loopback), or `nil` when it can.
    static func endpointProblem(_ url: URL) -> String? {
        guard let scheme = url.scheme?.lowercased() else {
            return "must be an absolute URL such as https://login.example.com/authorize, found \"\(url.absoluteString)\""
        }
        guard scheme == "http" || scheme == "https" else {
            return "must be an https URL, found scheme \"\(scheme)\" in \"\(url.absoluteString)\""
        }
        guard url.user == nil, url.password == nil else {
            // The URL is not repeated: it holds a password.
            return "must not contain a user name or password; put credentials nowhere in the configuration"
        }
        guard let host = normalisedHost(of: url) else {
            return "must name a host, found \"\(url.absoluteString)\""
        }
        if let port = url.port, !(1...65535).contains(port) {
            return "has port \(port), which is outside 1-65535"
        }
        if scheme == "http", !isLoopbackHost(host) {
            return "must use https (http is allowed only for loopback hosts such as 127.0.0.1 and localhost), found \"\(url.absoluteString)\""
        }
        return nil
    }

    /// Why `url` cannot be a redirect URL in a file (it must be absolute), or `nil` when it can.
    static func absoluteURLProblem(_ url: URL) -> String? {
        guard let scheme = url.scheme, !scheme.isEmpty else {
            return "must be an absolute URL such as http://localhost/callback, found \"\(url.absoluteString)\""
        }
        return nil
    }

    /// The text of a URL-valued JSON string as a URL, or `nil` when Foundation cannot parse it.
    static func url(from text: String) -> URL? {
        guard !text.isEmpty, text.allSatisfy({ !$0.isWhitespace }) else { return nil }
        return URL(string: text)
    }
}
