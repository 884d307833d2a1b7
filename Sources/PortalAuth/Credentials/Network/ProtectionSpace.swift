public import Foundation
import PortalAuthTransport

/// Where a network credential applies: one host and port, as HTTP authentication and TLS see a server.
///
/// Host names are compared without regard to case and without a trailing dot; the port is the URL's, or 443
/// for https and 80 for http. `https://h` and `https://h:8443` are different spaces.
public struct ProtectionSpace: Hashable, Sendable, CustomStringConvertible {
    /// The host, lower case: `gis.example.com`, `127.0.0.1`, `::1`.
    public let host: String
    /// The port.
    public let port: Int

    /// The space of `url`; `nil` without an http(s) scheme or a host.
    public init?(url: URL) {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = URLNormalization.host(of: url), let port = URLNormalization.effectivePort(of: url)
        else { return nil }
        self.init(host: host, port: port)
    }

    /// A space for `host` and `port`.
    public init(host: String, port: Int) {
        self.host = URLNormalization.host(host)
        self.port = port
    }

    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
