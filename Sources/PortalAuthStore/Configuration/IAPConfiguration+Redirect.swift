public import Foundation

extension IAPConfiguration {
    /// The same configuration with another redirect URL (the command line's `--redirect-url`).
    public func replacingRedirectURL(_ redirectURL: URL) -> IAPConfiguration {
        var copy = IAPConfiguration(
            authorizeURL: authorizeURL, tokenURL: tokenURL, logoutURL: logoutURL, clientID: clientID,
            redirectURL: redirectURL, scopes: scopes, hostsBehindProxy: hostsBehindProxy,
            authorizationPromptType: authorizationPromptType, sourceFile: sourceFile
        )
        copy.issuer = issuer
        return copy
    }
}
