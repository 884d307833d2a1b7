package import Foundation
import Glibc

/// The one place where URLs and hosts are normalised for comparing, so that a configuration check, a stored
/// sign-in's key, a discovery document's issuer and a protection space all agree on when two URLs are the same.
package enum URLNormalization {
    /// The host of `url` normalised by `host(_:)`, or `nil` when the URL has none.
    package static func host(of url: URL) -> String? {
        guard let host = url.host(percentEncoded: false), !host.isEmpty else { return nil }
        return Self.host(host)
    }

    /// `host` in lower case without one trailing dot and without IPv6 brackets, an IPv6 address in its
    /// canonical text (`0:0::1` becomes `::1`).
    package static func host(_ host: String) -> String {
        var host = host.lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.hasSuffix("."), host.count > 1 { host.removeLast() }
        return canonicalIPv6(host) ?? host
    }

    /// The port the URL connects to: its explicit port, else 80 for http and 443 for https.
    package static func effectivePort(of url: URL) -> Int? {
        if let port = url.port { return port }
        switch url.scheme?.lowercased() {
        case "http": return 80
        case "https": return 443
        default: return nil
        }
    }

    /// `url` as a text that is equal for URLs naming the same place: scheme lower-cased, host normalised by
    /// `host(_:)`, the default port, trailing slashes, query and fragment dropped. Stored sign-ins are keyed by it.
    package static func comparable(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return url.absoluteString
        }
        // Set only when it changes: Foundation's scheme setter re-encodes the host through ICU's IDNA (building its
        // UTS #46 tables: about 5% of `portal-auth token`'s own work), and the host is set below anyway.
        if let scheme = components.scheme, scheme != scheme.lowercased() { components.scheme = scheme.lowercased() }
        if let host = host(of: url) {
            if host.utf8.contains(UInt8(ascii: ":")) {
                components.percentEncodedHost = "[\(host)]"
            } else {
                components.host = host
            }
        }
        if (components.scheme == "https" && components.port == 443)
            || (components.scheme == "http" && components.port == 80)
        {
            components.port = nil
        }
        while components.path.hasSuffix("/") { components.path.removeLast() }
        components.query = nil
        components.fragment = nil
        return components.string ?? url.absoluteString
    }

    /// The segments of a URL path (as the URL writes it, percent-encoded) for deciding whether the path lies
    /// inside another: each segment percent-decoded, then `.` and `..` removed as RFC 3986 §5.2.4 removes dot
    /// segments; empty segments are dropped. Nil when the path is ambiguous, that is when servers may route it
    /// elsewhere than it reads, so no credential may be sent with it:
    ///
    /// - a segment that is `.` or `..` only once decoded (`%2e%2e`, `.%2E`): some servers decode before resolving
    ///   dot segments (`/arcgis/%2e%2e/other` reaches `/other`), others do not;
    /// - an encoded `/` (`%2F`) or `\` (`%5C`), or a literal `\` (taken as `/` by some servers);
    /// - a `%` once decoded (`%252e`: double decoding), a control character or an encoded NUL, invalid percent
    ///   encoding or bytes that are not UTF-8;
    /// - a dot segment with a parameter (`..;x`, `.;`), which servlet containers read as the dot segment;
    /// - a `..` that climbs above the root.
    package static func pathSegments(_ encodedPath: String) -> [String]? {
        var segments: [String] = []
        for raw in encodedPath.utf8.split(separator: UInt8(ascii: "/")) {
            guard !raw.contains(UInt8(ascii: "\\")), let decoded = decodedSegment(raw) else { return nil }
            let bare = decoded.prefix { $0 != ";" }
            if bare == "." || bare == ".." {
                // Only a literal dot segment, without a parameter, is resolved; any other spelling is ambiguous.
                guard raw.elementsEqual(bare.utf8) else { return nil }
            }
            switch decoded {
            case ".": continue
            case "..": guard segments.popLast() != nil else { return nil }
            default: segments.append(decoded)
            }
        }
        return segments
    }

    /// One segment percent-decoded, or nil when it decodes to `/`, `\`, `%` or a control character, or is not
    /// valid percent-encoded UTF-8.
    private static func decodedSegment(_ raw: Substring.UTF8View.SubSequence) -> String? {
        // Most segments have no escape: Foundation's decoding, which goes through CoreFoundation, is only for those
        // that do.
        let text = String(Substring(raw))
        guard let decoded = raw.contains(UInt8(ascii: "%")) ? text.removingPercentEncoding : text else { return nil }
        let refused = decoded.unicodeScalars.contains { scalar in
            switch scalar.value {
            case 0x2F, 0x5C, 0x25, 0..<0x20, 0x7F: return true  // / \ % and the ASCII controls
            case 0x20..<0x80: return false
            default: return scalar.properties.generalCategory == .control
            }
        }
        if refused { return nil }
        return decoded
    }

    /// What a loopback host names: the one loopback rule of the library, used by the IAP configuration's URL
    /// check, the transport's http rule and the redirect listener alike.
    package enum LoopbackHost: Sendable, Equatable {
        /// `localhost` or a name under it (`auth.localhost`; RFC 6761 §6.3: both resolve to the loopback interface
        /// without DNS, in libcurl and in browsers): both address families.
        case name
        /// A dotted IPv4 address in 127.0.0.0/8, as written.
        case ipv4(String)
        /// `::1`, in any spelling.
        case ipv6
    }

    /// What `host` names when it is a loopback host (normalised by `host(_:)` first: any case, brackets and one
    /// trailing dot allowed): `localhost` and `*.localhost` (RFC 6761 §6.3), 127.0.0.0/8, `::1`; nil for any other
    /// host (`localhost.example.com`, `127.0.0.1.nip.io`, `::ffff:127.0.0.1`, `0.0.0.0`).
    package static func loopbackHost(_ host: String) -> LoopbackHost? {
        let host = self.host(host)
        if host == "localhost" { return .name }
        if host.hasSuffix(".localhost") {
            // Every label before `localhost` must be a name's label: none empty (`.localhost`, `a..localhost`).
            let labels = host.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
            return labels.allSatisfy { !$0.isEmpty } ? .name : nil
        }
        if host == "::1" { return .ipv6 }  // host(_:) wrote any IPv6 spelling canonically
        var address = in_addr()
        guard inet_pton(AF_INET, host, &address) == 1 else { return nil }
        return UInt32(bigEndian: address.s_addr) >> 24 == 127 ? .ipv4(host) : nil
    }

    /// Whether `host` is a loopback host by `loopbackHost(_:)`.
    package static func isLoopbackHost(_ host: String) -> Bool {
        loopbackHost(host) != nil
    }

    /// The canonical text of an IPv6 address (`0:0::1` becomes `::1`), or `nil` when `text` is not one.
    package static func canonicalIPv6(_ text: String) -> String? {
        guard text.utf8.contains(UInt8(ascii: ":")) else { return nil }
        var address = in6_addr()
        guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count)) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
