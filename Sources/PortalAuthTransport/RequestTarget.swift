internal import CPortalAuthCurl
import Foundation
import Glibc
import PortalAuthCore
import Synchronization

/// The scheme, host and port of a request URL as libcurl itself parses them, so that the http check and the
/// connection agree on the host (no parser differences), and whether that host is loopback.
struct RequestTarget: Equatable {
    /// `http` or `https`.
    let scheme: String
    /// The host as libcurl normalises it (`127.0.0.1`, `[::1]`, `portal.example.com`).
    let host: String
    /// The port, explicit or the scheme's default.
    let port: Int

    /// Whether the host is loopback: `localhost`, 127.0.0.0/8, `::1` or `::ffff:127.x.y.z`.
    var isLoopback: Bool { Self.isLoopback(host: host) }

    /// Parses `url` with libcurl's URL parser and applies the transport's rules before anything is sent:
    /// only `http` and `https`, and `http` only to loopback hosts.
    static func checked(_ url: URL) throws(TransportError) -> RequestTarget {
        let text = url.absoluteString
        let origin = Self.originText(of: text)
        if let origin, let known = known.withLock({ $0[origin] }) { return known }
        let target = try parsed(url, text: text)
        if let origin {
            known.withLock { known in
                if known.count >= knownCapacity { known.removeAll() }
                known[origin] = target
            }
        }
        return target
    }

    /// Targets already checked, by the URL text up to the end of its authority (`https://host:port`): the scheme
    /// and authority are all libcurl reads the target from, so a URL that starts the same has the same target,
    /// and each origin an app talks to is parsed once rather than before every request. Path and query, which may
    /// carry a token, are not kept.
    private static let known = Mutex<[String: RequestTarget]>([:])
    private static let knownCapacity = 256

    /// `scheme://authority` of `text`; nil when it has no `://` after its scheme, or user information (a
    /// password is not kept either).
    static func originText(of text: String) -> String? {
        let bytes = text.utf8
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), bytes[colon...].starts(with: "://".utf8) else {
            return nil
        }
        let authority = bytes[bytes.index(colon, offsetBy: 3)...]
        let end =
            authority.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }
            ?? bytes.endIndex
        guard !authority[..<end].contains(UInt8(ascii: "@")) else { return nil }
        return String(Substring(bytes[..<end]))
    }

    /// `checked` without the memory.
    private static func parsed(_ url: URL, text: String) throws(TransportError) -> RequestTarget {
        // Redacted only for an error: this runs before every request.
        do { try CurlLibrary.load() } catch {
            throw TransportError(.libraryUnavailable, url: RedactedURL(url), detail: error.description)
        }
        guard let parts = CurlURLParts(text) else {
            throw TransportError(.unsupportedURL, url: RedactedURL(url), detail: "libcurl cannot parse the URL")
        }
        guard parts.scheme == "http" || parts.scheme == "https" else {
            throw TransportError(
                .unsupportedURL, url: RedactedURL(url), detail: "only http and https URLs are supported")
        }
        let target = RequestTarget(scheme: parts.scheme, host: parts.host, port: parts.port)
        if target.scheme == "http" && !target.isLoopback {
            throw TransportError(.insecureHTTP, url: RedactedURL(url), detail: "")
        }
        return target
    }

    /// Whether `host` names this machine's loopback interface: the library's one rule,
    /// `URLNormalization.loopbackHost(_:)`.
    static func isLoopback(host: String) -> Bool {
        URLNormalization.isLoopbackHost(host)
    }
}

/// The scheme, host and port that libcurl's URL API (`curl_url`) reads from a URL string.
private struct CurlURLParts {
    let scheme: String
    let host: String
    let port: Int

    init?(_ text: String) {
        guard let handle = pa_curl_url() else { return nil }
        defer { pa_curl_url_cleanup(handle) }
        guard pa_curl_url_set(handle, CURLUPART_URL, text, 0) == CURLUE_OK,
            let scheme = Self.part(handle, CURLUPART_SCHEME, 0),
            let host = Self.part(handle, CURLUPART_HOST, 0),
            let port = Self.part(handle, CURLUPART_PORT, UInt32(CURLU_DEFAULT_PORT)).flatMap({ Int($0) })
        else { return nil }
        self.scheme = scheme.lowercased()
        self.host = host
        self.port = port
    }

    private static func part(_ handle: OpaquePointer, _ which: CURLUPart, _ flags: UInt32) -> String? {
        var value: UnsafeMutablePointer<CChar>?
        guard pa_curl_url_get(handle, which, &value, flags) == CURLUE_OK, let value else { return nil }
        defer { pa_curl_free(value) }
        return String(cString: value)
    }
}
