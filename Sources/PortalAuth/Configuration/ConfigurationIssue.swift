/// One problem (or warning) found in a configuration: what is wrong, with which key, and where.
///
/// Issues found in a file carry the 1-based line and column of the key, array entry or value
/// they concern; issues found in a configuration built in code carry no position.
import PortalAuthCore

package struct ConfigurationIssue: Sendable, Hashable, CustomStringConvertible {
    /// A sentence that says what is wrong and, where it helps, what to do.
    public let message: String
    /// The key path the issue concerns, such as `client_id` or `hosts_behind_proxy[2]`;
    /// `nil` when the issue concerns the whole file.
    public let key: String?
    /// The 1-based line of the issue in the file, when known.
    public let line: Int?
    /// The 1-based column of the issue in the file (counted in characters), when known.
    public let column: Int?

    /// Creates an issue; the message is made safe to show (its key names and values come from the file: no
    /// control characters reach a terminal).
    public init(message: String, key: String? = nil, line: Int? = nil, column: Int? = nil) {
        self.message = DisplayText.neutralised(message)
        self.key = key
        self.line = line
        self.column = column
    }

    /// The issue as `line 3, column 5: message`, or only the message when no position is known.
    public var description: String {
        let message = MessagePart.or(self.message, "this is not valid")
        guard let line else { return message }
        guard let column else { return "line \(line): \(message)" }
        return "line \(line), column \(column): \(message)"
    }

    /// The same issue placed at `line` and `column`.
    func located(line: Int?, column: Int?) -> ConfigurationIssue {
        ConfigurationIssue(message: message, key: key, line: line, column: column)
    }
}
