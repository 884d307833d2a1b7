/// The keys of an IAP configuration file, with the Swift parameter name each one maps to.
enum IAPConfigurationKey: String, CaseIterable, Sendable {
    case authorizeURL = "authorize_url"
    case tokenURL = "token_url"
    case logoutURL = "logout_url"
    case clientID = "client_id"
    case redirectURL = "redirect_url"
    case scope = "scope"
    case hostsBehindProxy = "hosts_behind_proxy"
    case authorizationPromptType = "authorization_prompt_type"

    /// Whether loading fails when the key is absent.
    var isRequired: Bool { self != .authorizationPromptType }

    /// The name used for the value in `IAPConfiguration.configuration(authorizeURL:…)`.
    var parameterName: String {
        switch self {
        case .authorizeURL: return "authorizeURL"
        case .tokenURL: return "tokenURL"
        case .logoutURL: return "logoutURL"
        case .clientID: return "clientID"
        case .redirectURL: return "redirectURL"
        case .scope: return "scopes"
        case .hostsBehindProxy: return "hostsBehindProxy"
        case .authorizationPromptType: return "authorizationPromptType"
        }
    }

    /// What the value is, for "missing key" messages.
    var summary: String {
        switch self {
        case .authorizeURL: return "the identity provider's authorization endpoint URL"
        case .tokenURL: return "the identity provider's token endpoint URL"
        case .logoutURL: return "the identity provider's logout endpoint URL"
        case .clientID: return "the application (client) ID registered with the identity provider"
        case .redirectURL: return "the redirect URL registered for the application, e.g. http://localhost/callback"
        case .scope: return "an array of scopes, e.g. [\"openid\", \"offline_access\"]"
        case .hostsBehindProxy: return "an array of host patterns, e.g. [\"*.contoso.com\"]"
        case .authorizationPromptType: return "one of \(IAPAuthorizationPromptType.allowedValueList)"
        }
    }

    /// The required keys, comma-separated, for messages.
    static let requiredKeyList = allCases.filter(\.isRequired).map(\.rawValue).joined(separator: ", ")
}
