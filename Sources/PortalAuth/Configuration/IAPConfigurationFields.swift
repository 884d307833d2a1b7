import Foundation

/// The values of an IAP configuration as far as they could be read, before the rules are applied.
///
/// `nil` means absent or already reported as the wrong type; a `nil` array entry is an entry of the wrong
/// type, kept so that the other entries keep their index in messages.
struct IAPConfigurationFields: Sendable {
    var authorizeURL: URL?
    var tokenURL: URL?
    var logoutURL: URL?
    var clientID: String?
    var redirectURL: URL?
    var scopes: [String?]?
    var hostsBehindProxy: [String?]?
    var authorizationPromptType: IAPAuthorizationPromptType? = .unspecified

    /// Every rule the present values break; `name` turns a key into the name used in messages.
    func issues(naming name: (IAPConfigurationKey) -> String) -> [ConfigurationIssue] {
        var issues: [ConfigurationIssue] = []
        func add(_ problem: String?, _ key: String) {
            if let issue = IAPConfigurationRules.issue(problem, key: key) { issues.append(issue) }
        }
        for (key, url) in [
            (IAPConfigurationKey.authorizeURL, authorizeURL), (.tokenURL, tokenURL), (.logoutURL, logoutURL),
        ] {
            if let url { add(URLRules.endpointProblem(url), name(key)) }
        }
        if let clientID { add(IAPConfigurationRules.clientIDProblem(clientID), name(.clientID)) }
        if let redirectURL { add(URLRules.redirectURLProblem(redirectURL), name(.redirectURL)) }
        if let scopes {
            add(IAPConfigurationRules.scopesProblem(count: scopes.count), name(.scope))
            for case let (index, scope?) in scopes.enumerated() {
                add(IAPConfigurationRules.scopeProblem(scope), "\(name(.scope))[\(index)]")
            }
        }
        if let hostsBehindProxy {
            add(IAPConfigurationRules.hostsProblem(count: hostsBehindProxy.count), name(.hostsBehindProxy))
            for case let (index, pattern?) in hostsBehindProxy.enumerated() {
                add(IAPConfigurationRules.hostPatternProblem(pattern), "\(name(.hostsBehindProxy))[\(index)]")
            }
        }
        return issues
    }

    /// The configuration, when every value is present and valid.
    func configuration(sourceFile: URL?) -> IAPConfiguration? {
        guard let authorizeURL, let tokenURL, let logoutURL, let clientID, let redirectURL,
            let scopes = scopes.flatMap(Self.complete), let hostsBehindProxy = hostsBehindProxy.flatMap(Self.complete),
            let authorizationPromptType,
            issues(naming: \.rawValue).isEmpty
        else { return nil }
        return IAPConfiguration(
            authorizeURL: authorizeURL, tokenURL: tokenURL, logoutURL: logoutURL, clientID: clientID,
            redirectURL: redirectURL, scopes: scopes, hostsBehindProxy: hostsBehindProxy,
            authorizationPromptType: authorizationPromptType, sourceFile: sourceFile)
    }

    /// The entries when none is missing.
    private static func complete(_ entries: [String?]) -> [String]? {
        let present = entries.compactMap { $0 }
        return present.count == entries.count ? present : nil
    }
}
