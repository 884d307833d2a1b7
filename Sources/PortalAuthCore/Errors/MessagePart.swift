/// Pieces of messages that leave a value's words out when the value is empty, so that no message ever interpolates an
/// empty value (issue 45: "… under another issuer, give ;"; `EmptyValueMessageTests` renders every message so).
///
/// ```swift
/// "cannot read the file" + MessagePart.given(": ", reason)   // "cannot read the file" when reason is ""
/// "the lock " + MessagePart.or(path, "of the store")          // "the lock of the store" when path is ""
/// "\(MessagePart.quoted(name, or: "an empty name")) is not …"  // "an empty name is not …" when name is ""
/// ```
package enum MessagePart {
    /// `before + value + after`, or "" when `value` is nil, empty or only white space.
    package static func given(_ before: String, _ value: String?, _ after: String = "") -> String {
        guard let value = nonBlank(value) else { return "" }
        return before + value + after
    }

    /// `value`, or `fallback` when it is nil, empty or only white space.
    package static func or(_ value: String?, _ fallback: String) -> String {
        nonBlank(value) ?? fallback
    }

    /// `value` in double quotes, or `fallback` when it is nil, empty or only white space.
    package static func quoted(_ value: String?, or fallback: String) -> String {
        nonBlank(value).map { "\"\($0)\"" } ?? fallback
    }

    /// `value` when it holds more than white space, else nil.
    package static func nonBlank(_ value: String?) -> String? {
        guard let value, !value.allSatisfy(\.isWhitespace) else { return nil }
        return value
    }
}
