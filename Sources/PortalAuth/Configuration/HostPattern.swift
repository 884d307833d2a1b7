package import Foundation
import PortalAuthTransport

/// One entry of `hosts_behind_proxy`: which hosts (and optionally which port) an IAP configuration covers.
///
/// - `*` matches every host.
/// - `*.contoso.com` matches `contoso.com` and every subdomain at any depth, never `evilcontoso.com`
///   nor `contoso.com.evil.net`.
/// - `maps.contoso.com`, `10.0.0.5` or `[::1]` match that host only.
/// - `host:8443` also requires the URL's port (80 for http and 443 for https when the URL has none).
///
/// Comparison ignores case and one trailing dot on either side.
package struct HostPattern: Sendable, Hashable, CustomStringConvertible {
    /// Which hosts the pattern covers.
    package enum Hosts: Sendable, Hashable {
        /// `*`.
        case any
        /// `*.domain`: the domain and all its subdomains.
        case domain(String)
        /// One host (a name, an IPv4 address or a canonical IPv6 address).
        case exact(String)
    }

    /// The pattern as written.
    package let text: String
    /// The hosts covered.
    package let hosts: Hosts
    /// The port required, when the pattern names one.
    package let port: Int?

    /// Why a pattern is invalid; the message completes "is not a valid host pattern: …".
    package struct Invalid: Error, Sendable, Equatable {
        let reason: String
    }

    // MARK: - Parsing

    /// Parses `text`, or throws why it is not a pattern.
    package init(_ text: String) throws(Invalid) {
        self.text = text
        guard !text.isEmpty else {
            throw Invalid(reason: "it is empty; write a host such as \"maps.contoso.com\" or \"*.contoso.com\"")
        }
        guard !text.contains(where: { $0.isWhitespace }) else { throw Invalid(reason: "it contains white space") }
        if text.contains("://") {
            let host = URL(string: text)?.host(percentEncoded: false).map { " (\"\($0)\")" } ?? ""
            throw Invalid(reason: "it is a URL; write only the host\(host)")
        }
        guard !text.contains("/") else { throw Invalid(reason: "it contains a path; write only the host") }
        guard !text.contains("@"), !text.contains("?"), !text.contains("#") else {
            throw Invalid(reason: "it contains \"@\", \"?\" or \"#\"; write only the host")
        }
        let (hostPart, port) = try Self.splitPort(text)
        self.port = port
        self.hosts = try Self.parseHosts(hostPart)
    }

    /// Splits `host[:port]` or `[v6][:port]`.
    private static func splitPort(_ text: String) throws(Invalid) -> (host: String, port: Int?) {
        var host = Substring(text)
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else {
                throw Invalid(reason: "the IPv6 address has no closing \"]\"")
            }
            host = text[text.startIndex...close]
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.first == ":" else {
                    throw Invalid(reason: "only \":port\" may follow an IPv6 address in brackets")
                }
                portText = rest.dropFirst()
            }
        } else if let colon = text.firstIndex(of: ":") {
            guard text.firstIndex(of: ":") == text.lastIndex(of: ":") else {
                throw Invalid(reason: "an IPv6 address must be written in brackets, e.g. \"[::1]\" or \"[::1]:8443\"")
            }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard let portText else { return (String(host), nil) }
        guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy(\.isASCIIDigit),
            let port = Int(portText), (1...65535).contains(port)
        else { throw Invalid(reason: "the port \"\(portText)\" is not a number from 1 to 65535") }
        return (String(host), port)
    }

    /// Parses the host part: `*`, `*.domain`, a name, an IPv4 address or a bracketed IPv6 address.
    private static func parseHosts(_ text: String) throws(Invalid) -> Hosts {
        if text == "*" { return .any }
        if text.hasPrefix("[") {
            guard let address = URLNormalization.canonicalIPv6(String(text.dropFirst().dropLast())) else {
                throw Invalid(reason: "\"\(text)\" is not an IPv6 address")
            }
            return .exact(address)
        }
        if text.hasPrefix("*.") {
            let domain = try hostName(String(text.dropFirst(2)), wildcard: true)
            return .domain(domain)
        }
        guard !text.contains("*") else {
            throw Invalid(
                reason: "a wildcard is allowed only alone (\"*\") or as the whole first label (\"*.contoso.com\")")
        }
        return .exact(try hostName(text, wildcard: false))
    }

    /// Validates a host name (or the domain after `*.`) and returns it in lower case without a trailing dot.
    private static func hostName(_ text: String, wildcard: Bool) throws(Invalid) -> String {
        var name = text.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        guard !name.isEmpty else {
            throw Invalid(
                reason: wildcard ? "\"*.\" names no domain; write \"*.contoso.com\" or \"*\"" : "it names no host")
        }
        guard !name.contains("*") else {
            throw Invalid(
                reason: "a wildcard is allowed only alone (\"*\") or as the whole first label (\"*.contoso.com\")")
        }
        if !name.allSatisfy(\.isASCII) {
            // An internationalised name: compare in its ASCII (punycode) form, as URLs carry it.
            guard let ascii = URL(string: "http://\(name)")?.host(percentEncoded: false), ascii.allSatisfy(\.isASCII)
            else {
                throw Invalid(reason: "\"\(name)\" is not a valid host name")
            }
            name = ascii.lowercased()
        }
        guard name.utf8.count <= 253 else { throw Invalid(reason: "the host name is longer than 253 characters") }
        for label in name.split(separator: ".", omittingEmptySubsequences: false) {
            guard !label.isEmpty else {
                throw Invalid(reason: "\"\(text)\" has an empty label (two dots in a row or a leading dot)")
            }
            guard label.utf8.count <= 63 else {
                throw Invalid(reason: "the label \"\(label)\" is longer than 63 characters")
            }
            guard label.allSatisfy({ $0.isASCIILetterOrDigit || $0 == "-" || $0 == "_" }) else {
                throw Invalid(reason: "\"\(label)\" may hold only letters, digits, \"-\" and \"_\"")
            }
            guard label.first != "-", label.last != "-" else {
                throw Invalid(reason: "the label \"\(label)\" starts or ends with \"-\"")
            }
        }
        return name
    }

    // MARK: - Matching

    /// Whether the pattern covers `url`'s host (and port, when the pattern names one).
    package func matches(_ url: URL) -> Bool {
        guard let host = URLNormalization.host(of: url) else { return false }
        if let port, URLNormalization.effectivePort(of: url) != port { return false }
        switch hosts {
        case .any: return true
        case .domain(let domain): return host == domain || host.hasSuffix("." + domain)
        case .exact(let exact): return host == exact
        }
    }

    /// Why the pattern covers far more than one organisation's hosts, or `nil`: `*` (every host) and `*.com` (a
    /// whole top-level domain). Such a pattern is valid, but the IAP token then goes to every server it covers.
    var breadthProblem: String? {
        switch hosts {
        case .any:
            return "matches every host"
        case .domain(let domain) where !domain.contains("."):
            return "matches every host in the top-level domain .\(domain)"
        default:
            return nil
        }
    }

    /// The pattern as written.
    package var description: String { text }
}

extension Character {
    /// Whether this is one of `0`–`9`.
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
    /// Whether this is an ASCII letter or digit.
    fileprivate var isASCIILetterOrDigit: Bool { isASCII && (isLetter || isNumber) }
}
