/// The rules for IAP configuration values, shared by files and by configurations built in code.
///
/// Each function returns why a value breaks its rule, as the end of a sentence that starts with the
/// key (`` `client_id` must not be empty``), or `nil` when the value is fine.
import PortalAuthCore

enum IAPConfigurationRules {
    /// A client ID is neither empty nor contains white space.
    static func clientIDProblem(_ clientID: String) -> String? {
        if clientID.allSatisfy(\.isWhitespace) {
            return "must not be empty; use the application (client) ID from the app registration"
        }
        if clientID.contains(where: \.isWhitespace) { return "must not contain white space, found \"\(clientID)\"" }
        return nil
    }

    /// The scope list is not empty.
    static func scopesProblem(count: Int) -> String? {
        count == 0 ? "must list at least one scope, e.g. [\"openid\", \"offline_access\"]" : nil
    }

    /// One scope is not empty and is a single scope (no white space).
    static func scopeProblem(_ scope: String) -> String? {
        if scope.isEmpty { return "must not be empty" }
        if scope.contains(where: \.isWhitespace) {
            return "must be a single scope without spaces, found \"\(scope)\"; list each scope as its own entry"
        }
        return nil
    }

    /// The host pattern list is not empty.
    static func hostsProblem(count: Int) -> String? {
        count == 0 ? "must list at least one host pattern, e.g. [\"*.contoso.com\"]" : nil
    }

    /// One host pattern is valid (see `HostPattern`).
    static func hostPatternProblem(_ pattern: String) -> String? {
        do {
            _ = try HostPattern(pattern)
            return nil
        } catch {
            return "is not a valid host pattern: \"\(pattern)\": \(error.reason)"
        }
    }

    /// A valid host pattern that covers every host or a whole top-level domain (`*`, `*.com`): the warning, as the
    /// end of a sentence that starts with the key, or `nil`.
    static func hostPatternBreadthWarning(_ pattern: String) -> String? {
        guard let breadth = (try? HostPattern(pattern))?.breadthProblem else { return nil }
        return "\"\(DisplayText.neutralised(pattern, limit: 100))\" \(breadth): the IAP access token would be sent to "
            + "every such server a request goes to. List the hosts of the proxied applications instead, such as "
            + "\"maps.contoso.com\" or \"*.contoso.com\""
    }

    /// The issue for `problem` about `key`, when there is a problem.
    static func issue(_ problem: String?, key: String) -> ConfigurationIssue? {
        problem.map { ConfigurationIssue(message: "`\(key)` \($0)", key: key) }
    }
}
