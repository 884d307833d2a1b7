public import Foundation

/// An HTTP response: status, ordered header fields, body and the URL that answered.
///
/// The `description` gives the status, the URL without query and the body size, never the body.
public struct TransportResponse: Sendable, CustomStringConvertible {
    /// The status code, e.g. 200.
    public var statusCode: Int
    /// The header fields of the final response, in order; look them up without regard to case.
    public var headers: TransportHeaders
    /// The body, decoded from any `Content-Encoding`.
    public var body: Data
    /// The URL that gave this response (the last one when redirects were followed).
    public var url: URL

    /// Creates a response.
    public init(statusCode: Int, headers: TransportHeaders = [], body: Data = Data(), url: URL) {
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
        self.url = url
    }

    /// The media type of `Content-Type` in lower case without parameters, e.g. `application/json`.
    public var mediaType: String? {
        guard let value = headers["Content-Type"] else { return nil }
        // Bytes: space and tab are the only white space around a media type (RFC 9110 §5.6.3), and this runs for
        // every response `data(for:)` reads.
        let isBlank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        let type = value.utf8.prefix { $0 != UInt8(ascii: ";") }.drop(while: isBlank)
        let end = type.lastIndex { !isBlank($0) }.map { type.index(after: $0) } ?? type.startIndex
        let trimmed = String(Substring(type[..<end])).lowercased()
        return trimmed.isEmpty ? nil : trimmed
    }

    /// Whether the status is 2xx.
    public var isSuccess: Bool { (200..<300).contains(statusCode) }

    public var description: String {
        "HTTP \(statusCode) from \(RedactedURL(url)) (\(body.count) bytes)"
    }
}
