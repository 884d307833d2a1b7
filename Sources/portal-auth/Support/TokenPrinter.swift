import Foundation
import PortalAuth

/// Prints a token a command was asked for: the only place the tool writes a token, and only to stdout.
enum TokenPrinter {
    /// Prints `info` in `format` (`header`: an `X-Esri-Authorization: Bearer …` line; `json`: the `TokenJSON`
    /// shape of `kind`, `url`, `username`, `clientID` and `extra`); `summary` is the stderr line of `plain` and `header`.
    static func print(
        _ info: TokenInfo, format: TokenFormat, kind: CredentialKind, url: URL, username: String?, clientID: String?,
        extra: [(String, JSONValue)] = [], summary: String
    ) throws {
        if let problem = TokenCharacters.problem(inToken: info.accessToken) {
            throw InputError(category: .invalidContent, description: "the token cannot be printed: \(problem)")
        }
        switch format {
        case .plain, .header:
            Output.result(format == .header ? "X-Esri-Authorization: Bearer \(info.accessToken)" : info.accessToken)
            StandardError.line(
                "\(summary) Valid until \(UTCTimestamp.iso8601(info.expirationDate))\(info.isSSLRequired ? "; send it over https only" : "")."
            )
        case .json:
            Output.json(
                TokenJSON.object(
                    kind: kind, url: url, username: username, clientID: clientID, token: info.accessToken,
                    tokenType: "Bearer",
                    expirationDate: info.expirationDate, sslRequired: info.isSSLRequired, extra: extra))
        }
    }
}
