import Foundation

/// One challenge of a `WWW-Authenticate` field (RFC 9110 §11.6.1): a scheme and its parameters.
///
/// A field may hold several challenges (`Negotiate, NTLM`, `Basic realm="a", Digest realm="a", qop="auth"`) and
/// a response may repeat the field; `parse` reads them all in order.
struct WWWAuthenticateChallenge: Sendable, Equatable {
    /// The scheme in lower case: `basic`, `digest`, `ntlm`, `negotiate`, `bearer`, …
    let scheme: String
    /// The parameters, names in lower case, values unquoted.
    let parameters: [String: String]

    /// The `realm` parameter.
    var realm: String? { parameters["realm"] }

    /// Every challenge in `values` (the values of all `WWW-Authenticate` fields), in order.
    static func parse(_ values: [String]) -> [WWWAuthenticateChallenge] {
        var challenges: [WWWAuthenticateChallenge] = []
        for value in values {
            for item in splitOutsideQuotes(value) {
                let text = item.trimmingCharacters(in: .whitespaces)
                guard !text.isEmpty else { continue }
                if let space = text.firstIndex(of: " "), !text[..<space].contains("=") {
                    // "Scheme param=value" or "Scheme token68": a new challenge.
                    var parameters: [String: String] = [:]
                    if let (name, value) = parameter(String(text[space...])) { parameters[name] = value }
                    challenges.append(
                        WWWAuthenticateChallenge(scheme: text[..<space].lowercased(), parameters: parameters))
                } else if let (name, value) = parameter(text), !challenges.isEmpty {
                    // "param=value": one more parameter of the current challenge.
                    let last = challenges.removeLast()
                    var parameters = last.parameters
                    parameters[name] = value
                    challenges.append(WWWAuthenticateChallenge(scheme: last.scheme, parameters: parameters))
                } else if !text.contains("=") {
                    challenges.append(WWWAuthenticateChallenge(scheme: text.lowercased(), parameters: [:]))
                }
            }
        }
        return challenges
    }

    /// `name=value` or `name="quoted value"` as a pair, name lower-cased; nil for anything else (a token68).
    private static func parameter(_ text: String) -> (String, String)? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard let equals = trimmed.firstIndex(of: "=") else { return nil }
        let name = trimmed[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
        var value = trimmed[trimmed.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty, !name.contains(" "), !value.isEmpty else { return nil }
        if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 {
            value = String(value.dropFirst().dropLast()).replacingOccurrences(of: "\\\"", with: "\"")
        }
        return (name, value)
    }

    /// `text` split at commas that are not inside a quoted string.
    private static func splitOutsideQuotes(_ text: String) -> [String] {
        var parts: [String] = []
        var current = ""
        var quoted = false
        var escaped = false
        for character in text {
            if escaped {
                escaped = false
            } else if character == "\\" && quoted {
                escaped = true
            } else if character == "\"" {
                quoted.toggle()
            } else if character == "," && !quoted {
                parts.append(current)
                current = ""
                continue
            }
            current.append(character)
        }
        parts.append(current)
        return parts
    }
}
