internal import CPortalAuthJansson
import Foundation

/// A JSON value parsed strictly (through jansson) or built in Swift.
///
/// Objects keep their members in document order, so a stored file or a printed
/// report reads the way it was written.
package enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    // MARK: - Accessors

    /// The string, when this is a string.
    package var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The value as an integer, when it is an integer or a number with no fraction.
    package var integerValue: Int64? {
        switch self {
        case .integer(let value): return value
        case .number(let value) where value.rounded() == value && abs(value) < 9.0e18: return Int64(value)
        default: return nil
        }
    }

    /// The value as a floating-point number, when it is numeric.
    package var doubleValue: Double? {
        switch self {
        case .integer(let value): return Double(value)
        case .number(let value): return value
        default: return nil
        }
    }

    /// The Boolean, when this is a Boolean.
    package var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The elements, when this is an array.
    package var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The object, when this is an object.
    package var objectValue: JSONObject? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// The member named `key`, when this is an object that has it.
    package subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }

    /// The JSON type name used in messages: "object", "array", "string", "number", "boolean" or "null".
    package var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .integer, .number: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }
}

/// A JSON object whose members keep their order.
///
/// Lookups, additions and replacements take constant time (a key index beside the ordered members), so building or
/// reading an object with many members stays linear in its size; removing a member takes linear time.
package struct JSONObject: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    /// The members in document order; keys are unique.
    package private(set) var members: [(key: String, value: JSONValue)]
    /// The position of each key in `members`.
    private var positions: [String: Int]

    /// Creates an object from ordered members; a later duplicate key replaces the earlier value.
    package init(_ members: [(key: String, value: JSONValue)] = []) {
        self.members = []
        self.positions = [:]
        self.members.reserveCapacity(members.count)
        self.positions.reserveCapacity(members.count)
        for member in members { self[member.key] = member.value }
    }

    /// Creates an object from a literal.
    package init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements.map { (key: $0.0, value: $0.1) })
    }

    /// The keys in order.
    package var keys: [String] { members.map(\.key) }

    /// The value for `key`; setting `nil` removes the member.
    package subscript(key: String) -> JSONValue? {
        get { positions[key].map { members[$0].value } }
        set {
            if let index = positions[key] {
                if let newValue {
                    members[index].value = newValue
                } else {
                    members.remove(at: index)
                    positions[key] = nil
                    for later in index..<members.count { positions[members[later].key] = later }
                }
            } else if let newValue {
                positions[key] = members.count
                members.append((key: key, value: newValue))
            }
        }
    }

    package static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.members.count == rhs.members.count
            && zip(lhs.members, rhs.members).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }
}

/// A document that is not well-formed JSON, with the position jansson reported.
package struct JSONSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// 1-based line of the problem (0 when unknown).
    public let line: Int
    /// 1-based column of the problem, counted in characters (0 when unknown).
    public let column: Int
    /// 0-based byte offset of the problem.
    public let position: Int
    /// jansson's own description of the problem.
    public let message: String

    /// Creates a syntax error.
    public init(line: Int, column: Int, position: Int, message: String) {
        self.line = line
        self.column = column
        self.position = position
        self.message = message
    }

    public var description: String {
        let message = MessagePart.or(message, "the JSON is not well-formed")
        return line > 0 ? "line \(line), column \(column): \(message)" : message
    }
}
