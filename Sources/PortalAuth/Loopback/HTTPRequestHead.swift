/// The request line and header fields of an HTTP/1.x request, parsed strictly and minimally.
///
/// Only what the loopback listener needs: the method, the request target, the version and the headers
/// (to read `Host`). Anything outside the grammar is rejected rather than guessed at.
package struct HTTPRequestHead: Sendable, Equatable {
    /// Why a head could not be parsed; each maps to one response status.
    package enum ParseError: Error, Sendable, Equatable {
        /// Not an HTTP/1.x request line or header block (400).
        case malformed(String)
        /// An HTTP version other than 1.0 and 1.1 (505).
        case unsupportedVersion
    }

    /// The method, e.g. `GET` (case-sensitive, as RFC 9110 says).
    package let method: String
    /// The request target as sent: origin form `/path?query`, or absolute form `http://host/path?query`.
    package let target: String
    /// `HTTP/1.0` or `HTTP/1.1`.
    let version: String
    /// Header fields in order; names as sent.
    let headers: [(name: String, value: String)]

    package static func == (lhs: HTTPRequestHead, rhs: HTTPRequestHead) -> Bool {
        lhs.method == rhs.method && lhs.target == rhs.target && lhs.version == rhs.version
            && lhs.headers.map(\.name) == rhs.headers.map(\.name)
            && lhs.headers.map(\.value) == rhs.headers.map(\.value)
    }

    /// The first value of the header `name` (case-insensitive).
    package func header(_ name: String) -> String? {
        let lowered = name.lowercased()
        return headers.first { $0.name.lowercased() == lowered }?.value
    }

    // MARK: - Finding the end of a head

    /// The index just past the blank line that ends a head (`CRLF CRLF`, or bare `LF LF`), searching from
    /// `start` (pass the previous buffer length minus 3 to scan incrementally), or nil if it is not there yet.
    package static func endOfHead(in bytes: [UInt8], from start: Int = 0) -> Int? {
        var index = max(start, 0)
        while index < bytes.count {
            if bytes[index] == lineFeed {
                if index + 1 < bytes.count, bytes[index + 1] == lineFeed { return index + 2 }
                if index + 2 < bytes.count, bytes[index + 1] == carriageReturn, bytes[index + 2] == lineFeed {
                    return index + 3
                }
            }
            index += 1
        }
        return nil
    }

    // MARK: - Parsing

    /// Parses a complete head (the bytes up to and including the blank line).
    package static func parse(_ bytes: some Collection<UInt8>) throws(ParseError) -> HTTPRequestHead {
        var lines = splitLines(Array(bytes))
        // RFC 9112 §2.2: a server should ignore at least one empty line before the request line.
        if let first = lines.first, first.isEmpty { lines.removeFirst() }
        guard let requestLine = lines.first, !requestLine.isEmpty else { throw .malformed("empty request") }

        let parts = requestLine.split(separator: space, omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .malformed("the request line does not have three parts") }
        let method = parts[0], target = parts[1], version = parts[2]
        guard !method.isEmpty, method.allSatisfy(isTokenByte) else { throw .malformed("invalid method") }
        guard !target.isEmpty, target.allSatisfy(isVisibleASCII) else { throw .malformed("invalid request target") }
        guard version.count == 8, version.starts(with: Array("HTTP/".utf8)),
            isDigit(version[version.startIndex + 5]), version[version.startIndex + 6] == UInt8(ascii: "."),
            isDigit(version[version.startIndex + 7])
        else { throw .malformed("invalid HTTP version") }
        let versionText = String(decoding: version, as: UTF8.self)
        guard versionText == "HTTP/1.1" || versionText == "HTTP/1.0" else { throw .unsupportedVersion }

        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() where !line.isEmpty {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
                throw .malformed("a header line without a colon")
            }
            let name = line[line.startIndex..<colon]
            // No whitespace before the colon and no obsolete line folding (RFC 9112 §5.1, §5.2).
            guard !name.isEmpty, name.allSatisfy(isTokenByte) else { throw .malformed("invalid header name") }
            let value = line[(colon + 1)...].trimmingOWS()
            guard value.allSatisfy(isFieldValueByte) else { throw .malformed("invalid header value") }
            headers.append((String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
        }
        return HTTPRequestHead(
            method: String(decoding: method, as: UTF8.self),
            target: String(decoding: target, as: UTF8.self),
            version: versionText,
            headers: headers
        )
    }

    /// Splits at `LF`, dropping one `CR` before it; a `CR` anywhere else is an error caught by the byte checks.
    private static func splitLines(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        bytes.split(separator: lineFeed, omittingEmptySubsequences: false).map { line in
            line.last == carriageReturn ? line.dropLast() : line
        }
    }

    // MARK: - Byte classes

    private static let lineFeed = UInt8(ascii: "\n")
    private static let carriageReturn = UInt8(ascii: "\r")
    private static let space = UInt8(ascii: " ")

    private static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }

    private static func isVisibleASCII(_ byte: UInt8) -> Bool { (0x21...0x7E).contains(byte) }

    /// `tchar` of RFC 9110 §5.6.2.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "A")...UInt8(ascii: "Z"):
            true
        default:
            Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }

    /// Visible characters, space, tab and obs-text; no controls (CR, NUL, …).
    private static func isFieldValueByte(_ byte: UInt8) -> Bool {
        byte == 0x09 || byte == 0x20 || isVisibleASCII(byte) || byte >= 0x80
    }
}

extension ArraySlice<UInt8> {
    /// Drops optional whitespace (space, tab) at both ends.
    fileprivate func trimmingOWS() -> ArraySlice<UInt8> {
        var slice = self
        while let first = slice.first, first == 0x20 || first == 0x09 { slice.removeFirst() }
        while let last = slice.last, last == 0x20 || last == 0x09 { slice.removeLast() }
        return slice
    }
}
