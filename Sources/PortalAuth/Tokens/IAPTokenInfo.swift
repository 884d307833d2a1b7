public import Foundation

/// The tokens an Identity-Aware Proxy sign-in holds.
///
/// `description` never shows a token.
public struct IAPTokenInfo: Sendable, Hashable, CustomStringConvertible {
    /// One of the two tokens: which must stay valid (the one the caller will send), and which goes to the hosts
    /// behind the proxy (`IAPCredential.tokenSentToProxy`).
    public enum Token: Sendable, Hashable {
        /// The OAuth access token (for proxies that check access tokens).
        case accessToken
        /// The OpenID Connect ID token (what the ArcGIS Maps SDK sends to the hosts behind the proxy).
        case idToken
    }

    /// The OAuth access token.
    public let accessToken: String
    /// When the access token expires.
    public let accessTokenExpirationDate: Date
    /// The OpenID Connect ID token, when the identity provider sent one.
    public let idToken: String?
    /// When the ID token expires.
    public let idTokenExpirationDate: Date?
    /// The refresh token, when one was issued.
    public let refreshToken: String?
    /// The scopes granted.
    public let scopes: [String]
    /// The token type, normally `Bearer`.
    public let tokenType: String

    /// Creates IAP token information.
    public init(
        accessToken: String, accessTokenExpirationDate: Date, idToken: String?, idTokenExpirationDate: Date?,
        refreshToken: String?, scopes: [String], tokenType: String
    ) {
        self.accessToken = accessToken
        self.accessTokenExpirationDate = accessTokenExpirationDate
        self.idToken = idToken
        self.idTokenExpirationDate = idTokenExpirationDate
        self.refreshToken = refreshToken
        self.scopes = scopes
        self.tokenType = tokenType
    }

    public var description: String {
        "IAPTokenInfo(accessToken: <redacted>, accessTokenExpirationDate: \(accessTokenExpirationDate.ISO8601Format()), "
            + "idToken: \(idToken == nil ? "nil" : "<redacted>"), refreshToken: \(refreshToken == nil ? "nil" : "<redacted>"), "
            + "scopes: \(scopes), tokenType: \(tokenType))"
    }
}
