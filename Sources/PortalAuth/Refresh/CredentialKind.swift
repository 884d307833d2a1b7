/// What kind of credential something is: the one vocabulary of the store, `status`, the summaries and the tool.
///
/// The raw value is the kind's one spelling, written in the store file (`"kind"`) and shown by the tool (`status`,
/// `token --format json`, `PORTAL_AUTH_KIND`): `oauth-user`, `iap`, `token`, `oauth-application`,
/// `pregenerated-token`. `ArcGISCredential.Kind` carries the credential itself and names its kind with this type.
package enum CredentialKind: String, Sendable, Hashable, CaseIterable {
    /// An ArcGIS portal's OAuth user sign-in (`OAuthUserCredential`); raw value `oauth-user`.
    case oauthUser = "oauth-user"
    /// An Identity-Aware Proxy sign-in (`IAPCredential`); raw value `iap`.
    case iap
    /// A token generated from a username and password (`TokenCredential`); raw value `token`.
    case token
    /// An application token, client credentials (`OAuthApplicationCredential`); raw value `oauth-application`.
    case oauthApplication = "oauth-application"
    /// A token generated outside the library (`PregeneratedTokenCredential`); raw value `pregenerated-token`.
    case pregeneratedToken = "pregenerated-token"

    /// Whether a credential of this kind is a sign-in whose tokens a `TokenKeeper` keeps (a `StoredCredential` in the
    /// store, a `CredentialSummary` in `status`); the other kinds are store entries of their own.
    package var isSignIn: Bool {
        switch self {
        case .oauthUser, .iap: return true
        case .token, .oauthApplication, .pregeneratedToken: return false
        }
    }
}
