internal import CPortalAuthJansson
package import Foundation

// MARK: - Parsing

/// jansson's hash seed, set before its first object: left to itself, jansson seeds from `/dev/urandom` (an open, a
/// read and a close on every `portal-auth token`); `getrandom(2)`, which Swift's generator calls, is one system call
/// and as random. (jansson keeps the first seed set; a seed of 0 would mean "choose one yourself".)
private enum JanssonSeed {
    static let once: Void = {
        var generator = SystemRandomNumberGenerator()
        json_object_seed(Int(truncatingIfNeeded: generator.next() | 1))
    }()
}

extension JSONValue {
    /// Parses `data` strictly: UTF-8 only, duplicate object keys rejected, nothing after the value.
    ///
    /// - Throws: `JSONSyntaxError` with jansson's line, column and message.
    package static func parse(_ data: Data) throws(JSONSyntaxError) -> JSONValue {
        JanssonSeed.once
        var error = json_error_t()
        let root: UnsafeMutablePointer<json_t>? = data.withUnsafeBytes { buffer in
            // jansson wants a non-null pointer even for an empty buffer.
            let base = buffer.baseAddress?.assumingMemoryBound(to: CChar.self) ?? UnsafePointer<CChar>(bitPattern: 1)
            return json_loadb(base, buffer.count, pa_json_strict_decode_flags(), &error)
        }
        guard let root else {
            let text = withUnsafeBytes(of: &error.text) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            throw JSONSyntaxError(
                line: Int(error.line), column: Int(error.column), position: Int(error.position), message: text)
        }
        defer { pa_json_decref(root) }
        return JSONValue(borrowing: root)
    }

    /// Parses a string (see `parse(_:)`).
    package static func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue {
        try parse(Data(text.utf8))
    }

    /// Converts a jansson value without taking ownership of it.
    private init(borrowing value: UnsafeMutablePointer<json_t>) {
        switch pa_json_typeof(value) {
        case JSON_OBJECT:
            var members: [(key: String, value: JSONValue)] = []
            var iterator = json_object_iter(value)
            while let current = iterator {
                let key = String(cString: json_object_iter_key(current))
                if let member = json_object_iter_value(current) {
                    members.append((key: key, value: JSONValue(borrowing: member)))
                }
                iterator = json_object_iter_next(value, current)
            }
            self = .object(JSONObject(members))
        case JSON_ARRAY:
            let count = json_array_size(value)
            var elements: [JSONValue] = []
            elements.reserveCapacity(count)
            for index in 0..<count {
                if let element = json_array_get(value, index) { elements.append(JSONValue(borrowing: element)) }
            }
            self = .array(elements)
        case JSON_STRING:
            let length = json_string_length(value)
            let bytes = UnsafeRawBufferPointer(start: json_string_value(value), count: length)
            self = .string(String(decoding: bytes, as: UTF8.self))
        case JSON_INTEGER:
            self = .integer(Int64(json_integer_value(value)))
        case JSON_REAL:
            self = .number(json_real_value(value))
        case JSON_TRUE:
            self = .bool(true)
        case JSON_FALSE:
            self = .bool(false)
        default:
            self = .null
        }
    }
}

// MARK: - Serialising

extension JSONValue {
    /// The value as JSON text: compact when `indent` is 0, else pretty-printed with that many spaces.
    ///
    /// Non-finite numbers, which JSON cannot hold, are written as `null`. Every control character is escaped
    /// (`\u009B`), not only the C0 ones JSON requires: DEL and C1 (U+0080–U+009F, among them CSI U+009B and NEL
    /// U+0085, which terminals obey), the line and paragraph separators U+2028 and U+2029 (line breaks to many
    /// readers, and to JavaScript before ES2019), and the bidirectional controls (U+061C, U+200E, U+200F,
    /// U+202A–U+202E, U+2066–U+2069, which reorder what a terminal or an editor shows). The text is the same JSON
    /// value, so any reader gets the same strings back; only nothing raw reaches a terminal, a log or a page.
    package func serialized(indent: Int = 0) -> String {
        JanssonSeed.once
        let tree = makeJansson()
        defer { pa_json_decref(tree) }
        guard let text = json_dumps(tree, pa_json_encode_flags(Int32(max(0, min(indent, 31))))) else { return "null" }
        defer { free(text) }
        return Self.escapingControls(String(cString: text))
    }

    /// `json` (jansson's output) with the controls it leaves raw (see `serialized(indent:)`) written as `\uXXXX`.
    /// Outside strings JSON text is ASCII without DEL, so every such character is inside a string, where the escape
    /// means the same character.
    static func escapingControls(_ json: String) -> String {
        guard json.utf8.contains(where: { $0 >= 0x7F }) else { return json }
        var escaped = String.UnicodeScalarView()
        for scalar in json.unicodeScalars {
            guard mustEscape(scalar) else {
                escaped.append(scalar)
                continue
            }
            let hex = String(scalar.value, radix: 16, uppercase: true)
            escaped.append(contentsOf: "\\u\(String(repeating: "0", count: 4 - hex.count))\(hex)".unicodeScalars)
        }
        return String(escaped)
    }

    /// Whether `scalar` is one `escapingControls` writes as an escape (all of them are below U+10000).
    private static func mustEscape(_ scalar: Unicode.Scalar) -> Bool {
        guard scalar.value >= 0x7F else { return false }
        if scalar.value <= 0x9F { return true }
        let properties = scalar.properties
        return properties.isBidiControl || properties.generalCategory == .lineSeparator
            || properties.generalCategory == .paragraphSeparator
    }

    /// Builds a new jansson tree owned by the caller.
    private func makeJansson() -> UnsafeMutablePointer<json_t> {
        switch self {
        case .null:
            return json_null()
        case .bool(let value):
            return value ? json_true() : json_false()
        case .integer(let value):
            return json_integer(json_int_t(value))
        case .number(let value):
            return json_real(value) ?? json_null()
        case .string(let value):
            let utf8 = Array(value.utf8) + [0]
            return utf8.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { chars in
                    json_stringn_nocheck(chars.baseAddress!, chars.count - 1)
                }
            } ?? json_null()
        case .array(let elements):
            let array = json_array()!
            for element in elements { json_array_append_new(array, element.makeJansson()) }
            return array
        case .object(let object):
            let tree = json_object()!
            for member in object.members {
                json_object_set_new_nocheck(tree, member.key, member.value.makeJansson())
            }
            return tree
        }
    }
}
