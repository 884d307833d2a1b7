import Foundation
import PortalAuth

/// Prints a token a command was asked for: the only place the tool writes a token, and only to stdout.
enum TokenPrinter {
    /// Prints `info` in `format` (`header`: an `X-Esri-Authorization: Bearer …` line); `fields` are added to the JSON
    /// object, `summary` is the stderr line of `plain` and `header`.
    static func print(_ info: TokenInfo, format: TokenFormat, fields: [(String, JSONValue)], summary: String) throws {
        if let problem = TokenCharacters.problem(inToken: info.accessToken) {
            throw InputError(category: .invalidContent, description: "the token cannot be printed: \(problem)")
        }
        switch format {
        case .plain, .header:
            Output.result(format == .header ? "X-Esri-Authorization: Bearer \(info.accessToken)" : info.accessToken)
            StandardError.line("\(summary) Valid until \(info.expirationDate.ISO8601Format())\(info.isSSLRequired ? "; send it over https only" : "").")
        case .json:
            let members: [(key: String, value: JSONValue)] = [
                ("token", .string(info.accessToken)),
                ("expires_at", .string(info.expirationDate.ISO8601Format())),
                ("expires", .integer(Int64((info.expirationDate.timeIntervalSince1970 * 1000).rounded()))),
                ("ssl", .bool(info.isSSLRequired)),
            ] + fields.map { (key: $0.0, value: $0.1) }
            Output.json(.object(JSONObject(members)))
        }
    }
}
