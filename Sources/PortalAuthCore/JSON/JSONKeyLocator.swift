package import Foundation

/// Finds where keys and array entries stand in JSON text that has already been parsed, so that
/// problems found after parsing can carry a line and column.
///
/// Paths are written the way issues name keys: `""` for the root value, `client_id` for a member of the
/// root object, `scope[1]` for an array entry, `a.b` for a nested member. An object member is located at
/// its key, an array entry at its first character. Lines and columns are 1-based; columns count characters.
package struct JSONKeyLocator: Sendable {
    /// A 1-based position in the text.
    package struct Location: Sendable, Hashable {
        package let line: Int
        package let column: Int
    }

    /// How deep paths are recorded; deeper values are walked but not recorded.
    static let maximumDepth = 3

    private var locations: [String: Location] = [:]

    /// Scans `data`, which must be the bytes of well-formed JSON.
    package init(scanning data: Data) {
        locations = Self.scan(Array(data))
    }

    /// The position recorded for `path`, or for its nearest recorded ancestor (ending at the root value).
    package func location(of path: String) -> Location? {
        var path = path
        while true {
            if let location = locations[path] { return location }
            guard !path.isEmpty else { return nil }
            path = Self.parent(of: path)
        }
    }

    /// The path without its last component: `a[1]` → `a`, `a.b` → `a`, `a` → `""`.
    static func parent(of path: String) -> String {
        guard let cut = path.lastIndex(where: { $0 == "[" || $0 == "." }) else { return "" }
        return String(path[..<cut])
    }

    // MARK: - Scanning

    /// A container being walked.
    private struct Frame {
        let isObject: Bool
        let path: String
        var count = 0
        var expectingKey = false
        var expectingValue = false
        var currentKey: String?
    }

    private static func scan(_ bytes: [UInt8]) -> [String: Location] {
        var found: [String: Location] = [:]
        var stack: [Frame] = []
        var line = 1
        var column = 1
        var atRootValue = true
        var index = 0

        /// The path of a value that starts now, if the current state expects one.
        func valuePath() -> String? {
            guard var top = stack.popLast() else {
                guard atRootValue else { return nil }
                atRootValue = false
                return ""
            }
            defer { stack.append(top) }
            if top.isObject {
                guard top.expectingValue, let key = top.currentKey else { return nil }
                top.expectingValue = false
                return top.path.isEmpty ? key : "\(top.path).\(key)"
            }
            guard top.expectingValue else { return nil }
            top.expectingValue = false
            top.count += 1
            return "\(top.path)[\(top.count - 1)]"
        }

        func record(_ path: String, _ location: Location) {
            if stack.count <= maximumDepth, found[path] == nil { found[path] = location }
        }

        while index < bytes.count {
            let byte = bytes[index]
            let here = Location(line: line, column: column)
            switch byte {
            case UInt8(ascii: "\""):
                let end = endOfString(bytes, from: index)
                if let top = stack.last, top.isObject, top.expectingKey {
                    let key = decodeKey(bytes[index..<end])
                    stack[stack.count - 1].expectingKey = false
                    stack[stack.count - 1].currentKey = key
                    let path = top.path.isEmpty ? key : "\(top.path).\(key)"
                    record(path, here)
                } else if let path = valuePath(), stack.last?.isObject != true {
                    record(path, here)
                }
                // Advance over the string, counting characters (strings hold no raw newlines).
                column += bytes[(index + 1)..<end].reduce(1) { $0 + (($1 & 0xC0) == 0x80 ? 0 : 1) }
                index = end
                continue
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let path = valuePath() ?? ""
                if stack.last?.isObject != true || stack.isEmpty { record(path, here) }
                let isObject = byte == UInt8(ascii: "{")
                stack.append(Frame(isObject: isObject, path: path, expectingKey: isObject, expectingValue: !isObject))
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                _ = stack.popLast()
            case UInt8(ascii: ","):
                if let top = stack.last {
                    stack[stack.count - 1].expectingKey = top.isObject
                    stack[stack.count - 1].expectingValue = !top.isObject
                }
            case UInt8(ascii: ":"):
                if !stack.isEmpty { stack[stack.count - 1].expectingValue = true }
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"):
                break
            case UInt8(ascii: "\n"):
                line += 1
                column = 0
            default:
                // The first character of a number or literal.
                if let path = valuePath(), stack.last?.isObject != true { record(path, here) }
            }
            if (byte & 0xC0) != 0x80 { column += 1 }
            index += 1
        }
        return found
    }

    /// The index just past the closing quote of the string that starts at `start`.
    private static func endOfString(_ bytes: [UInt8], from start: Int) -> Int {
        var index = start + 1
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "\""): return index + 1
            default: index += 1
            }
        }
        return bytes.count
    }

    /// The text of a key token (quotes included), unescaped through the JSON parser when it holds escapes.
    private static func decodeKey(_ token: ArraySlice<UInt8>) -> String {
        guard token.contains(UInt8(ascii: "\\")) else {
            return String(decoding: token.dropFirst().dropLast(), as: UTF8.self)
        }
        return (try? JSONValue.parse(Data(token)))?.stringValue ?? String(decoding: token, as: UTF8.self)
    }
}
