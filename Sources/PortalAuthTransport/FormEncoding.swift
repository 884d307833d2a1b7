/// `application/x-www-form-urlencoded` serialisation as the WHATWG URL standard defines it
/// (the format of OAuth token requests, RFC 6749 appendix B).
///
/// Bytes of the UTF-8 encoding that are ASCII letters, digits or one of `*-._` are kept; a space becomes `+`;
/// every other byte, the RFC 3986 reserved characters and `~` among them, becomes `%XX` with upper-case hex.
package enum FormEncoding {
    /// Encodes ordered fields as `name=value&name=value`.
    ///
    /// ```swift
    /// FormEncoding.encode([("grant_type", "authorization_code"), ("redirect_uri", "http://127.0.0.1:8080/cb")])
    /// // "grant_type=authorization_code&redirect_uri=http%3A%2F%2F127.0.0.1%3A8080%2Fcb"
    /// ```
    package static func encode(_ fields: [(String, String)]) -> String {
        fields.map { escape($0.0) + "=" + escape($0.1) }.joined(separator: "&")
    }

    /// Escapes one name or value.
    package static func escape(_ text: String) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "*"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"):
                output.append(byte)
            case UInt8(ascii: " "):
                output.append(UInt8(ascii: "+"))
            default:
                output.append(UInt8(ascii: "%"))
                output.append(hexDigits[Int(byte >> 4)])
                output.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)
}
