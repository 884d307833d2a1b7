import Foundation
import PortalAuth
import Synchronization

/// Writes the tool's output: results to stdout, diagnostics to stderr, JSON pretty-printed.
enum Output {
    /// Prints `line` to stdout.
    static func result(_ line: String) {
        print(line)
    }

    /// Prints `value` to stdout as JSON indented by two spaces.
    static func json(_ value: JSONValue) {
        print(value.serialized(indent: 2))
        ErrorReport.printedJSON.withLock { $0 = true }
    }

    /// Prints `line` to stderr.
    static func diagnostic(_ line: String) {
        StandardError.line(line)
    }

    /// A `file:line:column: severity: message` line, as compilers print them (`file: severity: message`
    /// when the position is unknown).
    static func diagnosticLine(file: String, issue: ConfigurationIssue, severity: String) -> String {
        var place = file
        if let line = issue.line {
            place += ":\(line)"
            if let column = issue.column { place += ":\(column)" }
        }
        return "\(place): \(severity): \(issue.message)"
    }

    /// `nil` as JSON `null`.
    static func json(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }

    /// `nil` as JSON `null`.
    static func json(_ value: Int?) -> JSONValue { value.map { .integer(Int64($0)) } ?? .null }
}
