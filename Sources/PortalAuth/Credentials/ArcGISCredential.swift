public import Foundation

/// A credential for ArcGIS resources, as the `ArcGISCredentialStore` holds them: the base class of
/// `OAuthUserCredential`, `IAPCredential`, `TokenCredential`, `OAuthApplicationCredential` and
/// `PregeneratedTokenCredential`, as in the ArcGIS Maps SDK for Swift.
///
/// Being a class, it takes extensions with static members, as the SDK's samples write them:
///
/// ```swift
/// extension ArcGISCredential {
///     static var publicSample: ArcGISCredential {
///         get async throws { try await TokenCredential.credential(for: portalURL, username: "viewer01", password: password) }
///     }
/// }
/// store.add(try await .publicSample)
/// ```
///
/// Only this library makes subclasses (the initializer is internal); `kind` says which one a credential is.
public class ArcGISCredential: @unchecked Sendable {
    // Every subclass is final and keeps only constants and locked state, so sharing one across tasks is safe.

    init() {}

    /// Which kind of credential this is, with the credential as its concrete type: switch over it instead
    /// of casting.
    public var kind: Kind {
        preconditionFailure("every ArcGISCredential subclass of this library names its kind")
    }

    /// What the credential is for, in messages ("the portal https://…").
    public var targetDescription: String { "an ArcGIS credential" }

    /// The signed-in user, when known.
    public var username: String? { nil }

    /// Whether this credential can be used for a request to `url`.
    public func canBeUsed(for url: URL) -> Bool { false }

    /// The referer the token was generated for; requests that carry the token send it as `Referer`.
    /// Empty when the token is not bound to a referer (OAuth tokens).
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
    /// Why the identity provider refused the refresh token at the last refresh (it expired or was revoked);
    /// nil when it has not. A sign-in is then needed.
    public let refreshTokenRefusal: String?
    /// The key that identifies the sign-in in the store (what `portal-auth use` and names point at).
    public let storeKey: String
    /// The portal URL (portal sign-ins), or the identity provider's authorize URL (IAP sign-ins).
    public let url: URL
    /// The IAP configuration file last signed in with, when there was one.
    public let configurationFile: String?

    /// Whether the sign-in can still give tokens without a new sign-in at `now`: the access token is valid, or a
    /// refresh token is held that has not expired and was not refused.
    public func isUsable(at now: Date = Date()) -> Bool {
        guard refreshTokenRefusal == nil else { return false }
        let refreshable = hasRefreshToken && refreshTokenExpirationDate.map { $0 > now } ?? true
        return refreshable || accessTokenExpirationDate > now
    }

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
        refreshTokenRefusal = record.refreshTokenRefusal
        storeKey = record.key
        url = (record.kind == .oauthUser ? record.portalURL : record.authorizeURL) ?? record.tokenURL
        configurationFile = record.configurationFile
    }
}
