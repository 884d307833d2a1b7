/// An HTTP/1.1 response of the loopback listener, serialized with the headers every answer carries:
/// `Connection: close`, HTML in UTF-8, no caching, a Content-Security-Policy that allows nothing but inline style,
/// no referrer, no framing, no sniffing.
package struct LoopbackResponse: Sendable, Equatable {
    /// The statuses the listener uses.
    enum Status: Int, Sendable {
        case ok = 200
        case found = 302
        case badRequest = 400
        case notFound = 404
        case methodNotAllowed = 405
        case misdirectedRequest = 421
        case headerFieldsTooLarge = 431
        case httpVersionNotSupported = 505

        /// The reason phrase.
        var reason: String {
            switch self {
            case .ok: "OK"
            case .found: "Found"
            case .badRequest: "Bad Request"
            case .notFound: "Not Found"
            case .methodNotAllowed: "Method Not Allowed"
            case .misdirectedRequest: "Misdirected Request"
            case .headerFieldsTooLarge: "Request Header Fields Too Large"
            case .httpVersionNotSupported: "HTTP Version Not Supported"
            }
        }
    }

    /// The headers every response carries, in order.
    static let fixedHeaders: [(String, String)] = [
        ("Content-Type", "text/html; charset=utf-8"),
        ("Cache-Control", "no-store"),
        ("Pragma", "no-cache"),
        (
            "Content-Security-Policy",
            "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; form-action 'none'; base-uri 'none'"
        ),
        ("Referrer-Policy", "no-referrer"),
        ("X-Content-Type-Options", "nosniff"),
        ("X-Frame-Options", "DENY"),
        ("Connection", "close"),
    ]

    let status: Status
    let body: [UInt8]
    /// A response to HEAD: the headers (with the body's length) and no body.
    let headOnly: Bool
    /// Where a `302 Found` sends the browser.
    var location: String? = nil

    /// The bytes to write.
    package var bytes: [UInt8] {
        var head = "HTTP/1.1 \(status.rawValue) \(status.reason)\r\n"
        for (name, value) in Self.fixedHeaders { head += "\(name): \(value)\r\n" }
        if status == .methodNotAllowed { head += "Allow: GET, HEAD\r\n" }
        if let location { head += "Location: \(location)\r\n" }
        head += "Content-Length: \(body.count)\r\n\r\n"
        return Array(head.utf8) + (headOnly ? [] : body)
    }
}
