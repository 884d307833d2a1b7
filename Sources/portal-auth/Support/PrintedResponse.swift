import Foundation
import PortalAuth

/// What `request --format json` shows of a response: never a credential.
enum PrintedResponse {
    /// Header fields that can carry credentials or sessions: left out of what is printed.
    static let withheldHeaders: Set<String> = [
        "authorization", "proxy-authorization", "x-esri-authorization", "cookie", "set-cookie", "x-auth-token",
    ]

    /// The `schema_version` of `request --format json` (CommandLineTool.md lists its fields): raised when a field
    /// changes meaning or goes away.
    static let jsonSchemaVersion: Int64 = 1

    /// The response as one JSON object: `status`, `url` (without query), `headers` (ordered pairs), `body`
    /// (parsed when it is JSON, else text when it is UTF-8, else `body_base64`).
    static func json(_ response: TransportResponse) -> JSONValue {
        var object: JSONObject = [
            "schema_version": .integer(jsonSchemaVersion),
            "status": .integer(Int64(response.statusCode)),
            "url": .string(RedactedURL(response.url).description),
            "headers": .array(
                response.headers.fields
                    .filter { !withheldHeaders.contains($0.name.lowercased()) }
                    .map { .array([.string($0.name), .string($0.value)]) }),
        ]
        if let parsed = try? JSONValue.parse(response.body) {
            object["body"] = parsed
        } else if let text = String(data: response.body, encoding: .utf8) {
            object["body"] = .string(text)
        } else {
            object["body_base64"] = .string(response.body.base64EncodedString())
        }
        return .object(object)
    }
}
