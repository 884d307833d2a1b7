package import Foundation
import PortalAuthCore

/// What `status` shows of a stored credential: never a token.
package struct CredentialSummary: Sendable, Equatable {
    /// What kind of sign-in a summary is of: the library's one `CredentialKind` (`oauthUser` or `iap`).
    public typealias Kind = CredentialKind

    /// Which kind of sign-in this is (`oauthUser` or `iap`).
    public let kind: CredentialKind
    /// The portal URL or the IAP configuration (file path or authorize URL).
    public let target: String
    /// The client ID.
    public let clientID: String
    /// The signed-in user, when known.
    public let username: String?
    /// When the access token expires.
    public let accessTokenExpirationDate: Date
    /// When the refresh token expires, when known.
    public let refreshTokenExpirationDate: Date?
    /// Whether a refresh token is held.
    public let hasRefreshToken: Bool
    /// When the ID token expires (IAP).
    public let idTokenExpirationDate: Date?
    /// The hosts the IAP credential is for.
    public let hostsBehindProxy: [String]
    /// When the credential was last signed in or refreshed.
    public let updatedAt: Date
    /// Why the identity provider refused the refresh token at the last refresh (it expired or was revoked);
    /// nil when it has not. A sign-in is then needed.
    public let refreshTokenRefusal: String?
    /// The key that identifies the sign-in in the store (what `portal-auth use` and names point at).
    public let storeKey: String
    /// The portal URL (portal sign-ins), or the identity provider's authorize URL (IAP sign-ins).
    public let url: URL
    /// The IAP configuration file last signed in with, when there was one.
    public let configurationFile: String?
    /// The user's name and e-mail address from the identity provider's UserInfo endpoint at sign-in (IAP), when given.
    public let userInfoName: String?
    public let userInfoEmail: String?
    /// The token sent to the hosts behind the proxy chosen at sign-in (IAP); nil when none was chosen.
    package let proxyToken: IAPTokenInfo.Token?
    /// The claims of the access token, when it is a JWT (never the token).
    package let accessTokenClaims: TokenClaims?
    /// The claims of the ID token, when one is held (never the token).
    package let idTokenClaims: TokenClaims?
    /// For a Microsoft Entra ID sign-in, the directory (tenant) ID the user signed in to: its ID token's `tid`, which
    /// names the tenant also where the configuration says `organizations`, `common` or a domain.
    package let entraTenantID: String?

    /// Whether the sign-in can still give tokens without a new sign-in at `now`: the access token is valid, or a
    /// refresh token is held that has not expired and was not refused.
    public func isUsable(at now: Date = Date()) -> Bool {
        guard refreshTokenRefusal == nil else { return false }
        let refreshable = hasRefreshToken && refreshTokenExpirationDate.map { $0 > now } ?? true
        return refreshable || accessTokenExpirationDate > now
    }

    package init(_ record: StoredCredential) {
        kind = record.kind
        target =
            kind == .iap
            ? record.configurationFile ?? (record.authorizeURL ?? record.tokenURL).absoluteString
            : (record.portalURL ?? record.tokenURL).absoluteString
        clientID = record.clientID
        username = record.username
        accessTokenExpirationDate = record.accessTokenExpiresAt
        refreshTokenExpirationDate = record.refreshTokenExpiresAt
        hasRefreshToken = record.refreshToken != nil
        idTokenExpirationDate = record.idTokenExpiresAt
        hostsBehindProxy = record.hostsBehindProxy
        updatedAt = record.updatedAt
        refreshTokenRefusal = record.refreshTokenRefusal
        storeKey = record.key
        url = (record.kind == .oauthUser ? record.portalURL : record.authorizeURL) ?? record.tokenURL
        configurationFile = record.configurationFile
        userInfoName = record.userInfoName
        userInfoEmail = record.userInfoEmail
        proxyToken = record.proxyToken
        accessTokenClaims = TokenClaims(jwt: record.accessToken)
        idTokenClaims = record.idToken.flatMap(TokenClaims.init(jwt:))
        entraTenantID =
            record.authorizeURL.flatMap(EntraAuthority.init(endpoint:)) == nil
            ? nil
            : record.idToken.flatMap { try? IDToken(compact: $0) }?.tenantID.flatMap {
                EntraAuthority.isTenantID($0) ? $0 : nil
            }
    }
}
