public import Foundation

/// The registration of an application with the identity provider in front of an Identity-Aware Proxy
/// (IAP), such as the Microsoft Entra application proxy, and the hosts that sit behind it.
///
/// Load one from a JSON file with ``configuration(from:)``, build one in code with
/// ``configuration(authorizeURL:tokenURL:logoutURL:clientID:redirectURL:scopes:hostsBehindProxy:authorizationPromptType:)``,
/// or use ``microsoft(tenantID:clientID:redirectURL:hostsBehindProxy:authorizationPromptType:)`` for Entra ID.
/// Every way applies the same rules, so a configuration value is always valid.
public struct IAPConfiguration: Sendable, Hashable {
    // MARK: - Properties

    /// The identity provider's authorization endpoint, opened in the browser to sign in.
    public let authorizeURL: URL
    /// The identity provider's token endpoint.
    public let tokenURL: URL
    /// The identity provider's logout endpoint, opened in the browser to sign out.
    public let logoutURL: URL
    /// The application (client) ID registered with the identity provider. Not a secret.
    public let clientID: String
    /// The redirect URL registered for the application.
    ///
    /// It may be any absolute URL, since files are shared with other platforms; this platform can sign in
    /// only with a loopback redirect (see ``isLoopbackRedirect``).
    public let redirectURL: URL
    /// The scopes requested, e.g. `["<client_id>/.default", "offline_access", "openid", "profile"]`.
    public let scopes: [String]
    /// The host patterns of the services behind the proxy, e.g. `["*.contoso.com"]`; see ``canBeUsed(for:)``.
    public let hostsBehindProxy: [String]
    /// The kind of user interaction asked for when signing in.
    public let authorizationPromptType: IAPAuthorizationPromptType
    /// The file the configuration was loaded from, or `nil` when it was built in code.
    ///
    /// It takes part in equality, so that credentials stored for a configuration stay tied to its file.
    public let sourceFile: URL?
    /// The identity provider's issuer identifier, for a provider whose OpenID Connect discovery document is not found
    /// from the authorize URL (its folder or a folder above it), e.g. Amazon Cognito's
    /// `https://cognito-idp.{region}.amazonaws.com/{pool}`. `nil` (the default): found by discovery.
    ///
    /// The sign-in then expects exactly this `iss` (redirect and ID token) and takes the keys from this issuer's
    /// discovery document, which must name ``authorizeURL`` and ``tokenURL``.
    public var issuer: URL? = nil

    /// `hostsBehindProxy`, parsed.
    package let hostPatterns: [HostPattern]

    /// Creates a configuration from values that have passed the rules.
    package init(
        authorizeURL: URL, tokenURL: URL, logoutURL: URL, clientID: String, redirectURL: URL,
        scopes: [String], hostsBehindProxy: [String], authorizationPromptType: IAPAuthorizationPromptType,
        sourceFile: URL?
    ) {
        self.authorizeURL = authorizeURL
        self.tokenURL = tokenURL
        self.logoutURL = logoutURL
        self.clientID = clientID
        self.redirectURL = redirectURL
        self.scopes = scopes
        self.hostsBehindProxy = hostsBehindProxy
        self.authorizationPromptType = authorizationPromptType
        self.sourceFile = sourceFile
        self.hostPatterns = hostsBehindProxy.compactMap { try? HostPattern($0) }
    }

    // MARK: - Using the configuration

    /// Whether the redirect URL can receive the sign-in redirect on this machine: an `http` URL whose host is
    /// loopback (`127.0.0.1`, any 127.0.0.0/8 address, `[::1]`, `localhost` or a name under it), with any port.
    public var isLoopbackRedirect: Bool {
        URLRules.isLoopbackRedirect(redirectURL)
    }

    /// Whether the redirect URL has an application's own scheme (`my-maps-app://auth`), received on a desktop
    /// through the scheme's handler (see ``SchemeRegistration``).
    public var isCustomSchemeRedirect: Bool {
        CustomSchemeRedirect(redirectURL) != nil
    }

    /// Whether this configuration applies to `url`: an `http` or `https` URL whose host (and port, where a
    /// pattern names one) matches one of ``hostsBehindProxy``.
    ///
    /// `"*"` matches any host; `"*.contoso.com"` matches `contoso.com` and all its subdomains but not
    /// `evilcontoso.com`; any other pattern matches its host only. Case and a trailing dot are ignored.
    public func canBeUsed(for url: URL) -> Bool {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else { return false }
        return hostPatterns.contains { $0.matches(url) }
    }

    // MARK: - Building in code

    /// Creates a configuration from its values, applying the same rules as a file.
    ///
    /// - Parameters:
    ///   - authorizeURL: The authorization endpoint (https, or http on a loopback host).
    ///   - tokenURL: The token endpoint (https, or http on a loopback host).
    ///   - logoutURL: The logout endpoint (https, or http on a loopback host).
    ///   - clientID: The application (client) ID; not empty.
    ///   - redirectURL: The registered redirect URL; absolute.
    ///   - scopes: At least one scope; each non-empty and without spaces.
    ///   - hostsBehindProxy: At least one host pattern (`*`, `*.domain`, `host`, `host:port`, `[v6]:port`).
    ///   - authorizationPromptType: The user interaction asked for; `.unspecified` by default.
    /// - Throws: ``ConfigurationError`` of kind ``ConfigurationError/Kind/invalidConfiguration`` listing every
    ///   problem, each named by its parameter (e.g. `hostsBehindProxy[1]`).
    public static func configuration(
        authorizeURL: URL,
        tokenURL: URL,
        logoutURL: URL,
        clientID: String,
        redirectURL: URL,
        scopes: [String],
        hostsBehindProxy: [String],
        authorizationPromptType: IAPAuthorizationPromptType = .unspecified
    ) throws(ConfigurationError) -> IAPConfiguration {
        let fields = IAPConfigurationFields(
            authorizeURL: authorizeURL, tokenURL: tokenURL, logoutURL: logoutURL, clientID: clientID,
            redirectURL: redirectURL, scopes: scopes, hostsBehindProxy: hostsBehindProxy,
            authorizationPromptType: authorizationPromptType)
        let issues = fields.issues(naming: \.parameterName)
        guard issues.isEmpty, let configuration = fields.configuration(sourceFile: nil) else {
            throw .invalid(nil, issues: issues)
        }
        return configuration
    }
}

extension IAPConfiguration {
    /// A warning for each entry of ``hostsBehindProxy`` that covers every host (`*`) or a whole top-level domain
    /// (`*.com`): the IAP access token would go to every such server. `iap check` shows them, and a sign-in reports
    /// them to its `SignInObserver` before the browser opens.
    public var broadHostPatternWarnings: [String] {
        hostsBehindProxy.enumerated().compactMap { index, pattern in
            IAPConfigurationRules.hostPatternBreadthWarning(pattern).map { "`hosts_behind_proxy[\(index)]` \($0)" }
        }
    }
}

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

/// The kind of user interaction the identity provider is asked for when signing in to an
/// Identity-Aware Proxy (the OpenID Connect `prompt` parameter).
///
/// The raw value is the value of `authorization_prompt_type` in a configuration file and of `prompt`
/// in the authorization request; ``unspecified`` sends no `prompt` at all.
public enum IAPAuthorizationPromptType: String, Sendable, CaseIterable {
    /// The provider's default (JSON `""` or an absent key): single sign-on when a session exists,
    /// an account picker only when needed.
    case unspecified = ""
    /// No user interface; signing in fails with `interaction_required` or `login_required`
    /// when there is no session. Useful to check for an existing session.
    case none = "none"
    /// Always ask for credentials, ignoring any single sign-on session.
    case login = "login"
    /// Show the consent dialog after signing in.
    case consent = "consent"
    /// Show the account picker.
    case selectAccount = "select_account"

    /// The value to send as the `prompt` parameter, or `nil` for ``unspecified``.
    public var promptParameter: String? {
        self == .unspecified ? nil : rawValue
    }

    /// The allowed JSON values, quoted and comma-separated, for messages.
    static let allowedValueList = allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
}
