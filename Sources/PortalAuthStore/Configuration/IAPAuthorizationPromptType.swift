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
