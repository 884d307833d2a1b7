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
        line > 0 ? "line \(line), column \(column): \(message)" : message
    }
}
