import Foundation
import PortalAuth

/// The one JSON shape of every command that prints a token (`token`, `refresh`, `generate-token`, `app-token`).
enum TokenJSONShape {
    /// The members every such object has, in this order.
    static let commonKeys = [
        "kind", "url", "username", "client_id", "token", "token_type", "expires_at", "expires_in", "ssl_required",
    ]

    /// What is wrong with `json` as a token object of `kind`; empty when nothing is.
    static func problems(in json: JSONValue, kind: String) -> [String] {
        guard let object = json.objectValue else { return ["not an object"] }
        var problems: [String] = []
        if Array(object.keys.prefix(commonKeys.count)) != commonKeys {
            problems.append("keys \(object.keys), not first \(commonKeys)")
        }
        if object["kind"]?.stringValue != kind { problems.append("kind \(String(describing: object["kind"]))") }
        if let url = object["url"]?.stringValue {
            if URL(string: url)?.host == nil || url.contains(" ") { problems.append("url \(url) is not a bare URL") }
        } else {
            problems.append("no url")
        }
        if object["token"]?.stringValue?.isEmpty != false { problems.append("no token") }
        if object["token_type"]?.stringValue == nil { problems.append("no token_type") }
        if let expiry = object["expires_at"]?.stringValue {
            if (try? Date(expiry, strategy: .iso8601)) == nil {
                problems.append("expires_at \(expiry) is not ISO 8601")
            }
        } else {
            problems.append("no expires_at")
        }
        if object["expires_in"]?.integerValue == nil { problems.append("no expires_in") }
        if object["ssl_required"]?.boolValue == nil { problems.append("no ssl_required") }
        return problems
    }
}
