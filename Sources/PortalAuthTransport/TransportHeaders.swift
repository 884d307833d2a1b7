/// HTTP header fields in the order they were added or received, looked up without regard to case.
///
/// A name may occur more than once (`Set-Cookie`, `WWW-Authenticate`). The `description` lists names only:
/// header values can hold tokens and passwords.
public struct TransportHeaders: Sendable, Equatable, Sequence, ExpressibleByArrayLiteral, CustomStringConvertible {
    /// The fields in order, names as given.
    public private(set) var fields: [(name: String, value: String)]

    /// Creates headers from ordered fields.
    public init(_ fields: [(name: String, value: String)] = []) {
        self.fields = fields
    }

    /// Creates headers from a literal such as `[("Accept", "application/json")]`.
    public init(arrayLiteral elements: (String, String)...) {
        self.fields = elements.map { (name: $0.0, value: $0.1) }
    }

    /// Whether `name` can be a field name: an RFC 9110 §5.1 token (§5.6.2: letters, digits and ``!#$%&'*+-.^_`|~``),
    /// so neither a control character nor a separator can reach a request's head.
    package static func isFieldName(_ name: String) -> Bool {
        !name.isEmpty
            && name.utf8.allSatisfy { byte in
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
                    || fieldNameSymbols.contains(byte)
            }
    }

    /// The characters other than letters and digits a token may hold (RFC 9110 §5.6.2).
    private static let fieldNameSymbols = Set("!#$%&'*+-.^_`|~".utf8)

    // MARK: - Lookup

    /// The first value of the field called `name` (any case), or `nil`; setting it replaces every field of that name
    /// with one (``replaceOrAdd(name:value:)``), and setting `nil` removes them: `request.headers["Accept"] = "application/json"`.
    public subscript(name: String) -> String? {
        get { fields.first { Self.sameName($0.name, name) }?.value }
        set {
            if let newValue { replaceOrAdd(name: name, value: newValue) } else { remove(name: name) }
        }
    }

    /// Every value of the field called `name` (any case), in order.
    public func values(for name: String) -> [String] {
        fields.filter { Self.sameName($0.name, name) }.map(\.value)
    }

    /// Whether a field called `name` (any case) is present.
    public func contains(_ name: String) -> Bool {
        self[name] != nil
    }

    // MARK: - Changing

    /// Appends a field, keeping any earlier field of the same name.
    public mutating func add(name: String, value: String) {
        fields.append((name: name, value: value))
    }

    /// Replaces every field called `name` (any case) with one field at the position of the first, or appends it.
    public mutating func replaceOrAdd(name: String, value: String) {
        if let first = fields.firstIndex(where: { Self.sameName($0.name, name) }) {
            fields[first].value = value
            if fields[(first + 1)...].contains(where: { Self.sameName($0.name, name) }) {
                fields = fields.enumerated().filter { $0.offset == first || !Self.sameName($0.element.name, name) }.map(
                    \.element)
            }
        } else {
            add(name: name, value: value)
        }
    }

    /// Removes every field called `name` (any case).
    public mutating func remove(name: String) {
        fields.removeAll { Self.sameName($0.name, name) }
    }

    /// Whether two field names are equal without regard to ASCII case (RFC 9110 §5.1: names are tokens, ASCII),
    /// compared byte by byte without making lower-cased copies: every request and response looks up several.
    static func sameName(_ lhs: String, _ rhs: String) -> Bool {
        let (left, right) = (lhs.utf8, rhs.utf8)
        return left.count == right.count && left.elementsEqual(right) { $0 == $1 || asciiLower($0) == asciiLower($1) }
    }

    private static func asciiLower(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }

    // MARK: - Conformances

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
        fields.makeIterator()
    }

    public static func == (lhs: TransportHeaders, rhs: TransportHeaders) -> Bool {
        lhs.fields.count == rhs.fields.count
            && zip(lhs.fields, rhs.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    /// The field names only; values are never shown.
    public var description: String {
        "[" + fields.map(\.name).joined(separator: ", ") + "]"
    }
}
