public import Foundation

/// A credential for ArcGIS resources, as the `ArcGISCredentialStore` holds them.
public protocol ArcGISCredential: AnyObject, Sendable {
    /// What the credential is for, in messages ("the portal https://…").
    var targetDescription: String { get }
    /// The signed-in user, when known.
    var username: String? { get }
    /// Whether this credential can be used for a request to `url`.
    func canBeUsed(for url: URL) -> Bool
    /// The referer the token was generated for; requests that carry the token send it as `Referer`.
    /// Empty when the token is not bound to a referer (OAuth tokens).
    var referer: String { get }
}

extension ArcGISCredential {
    /// No referer: OAuth tokens are not bound to one.
    public var referer: String { "" }
}

/// A credential whose tokens come from an interactive sign-in and are kept fresh by a `TokenKeeper`.
protocol TokenKeepingCredential: ArcGISCredential {
    /// The keeper of the tokens.
    var keeper: TokenKeeper { get }
    /// The store key of this credential.
    var storeKey: String { get }
}

extension TokenKeepingCredential {
    /// The stored record, for persisting.
    var record: StoredCredential { keeper.current }
}

/// What `status` shows of a stored credential: never a token.
public struct CredentialSummary: Sendable, Equatable {
    /// `oauth-user` or `iap`.
    public let kind: String
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

    init(_ record: StoredCredential) {
        kind = record.kind.rawValue
        switch record.kind {
        case .oauthUser: target = (record.portalURL ?? record.tokenURL).absoluteString
        case .iap: target = record.configurationFile ?? (record.authorizeURL ?? record.tokenURL).absoluteString
        }
        clientID = record.clientID
        username = record.username
        accessTokenExpirationDate = record.accessTokenExpiresAt
        refreshTokenExpirationDate = record.refreshTokenExpiresAt
        hasRefreshToken = record.refreshToken != nil
        idTokenExpirationDate = record.idTokenExpiresAt
        hostsBehindProxy = record.hostsBehindProxy
        updatedAt = record.updatedAt
    }
}
