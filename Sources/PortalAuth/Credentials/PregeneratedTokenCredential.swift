public import Foundation
import PortalAuthStore
import PortalAuthTransport

/// A credential for token-secured ArcGIS resources that holds a token generated outside this library (with the
/// `generateToken` REST operation directly, or handed over by another tool).
///
/// It cannot renew the token: once it has expired, `tokenInfo` throws and a new credential is needed. A persistent
/// `ArcGISCredentialStore` keeps it (the token only) across restarts.
///
/// ```swift
/// let info = TokenInfo(accessToken: token, expirationDate: expiry, isSSLRequired: true)!
/// let credential = PregeneratedTokenCredential(url: URL(string: "https://gis.example.com/server/rest/services")!,
///                                              tokenInfo: info, referer: "https://app.example.com")
/// ```
public final class PregeneratedTokenCredential: ArcGISCredential, CustomStringConvertible, @unchecked Sendable {
    /// The portal, server or service URL the token was generated for.
    public let url: URL
    /// The referer used when the token was generated (`client=referer`), or empty when none was used.
    public override var referer: String { boundReferer }
    private let boundReferer: String
    let info: TokenInfo
    let root: URL

    /// Creates the credential.
    ///
    /// - Parameters:
    ///   - url: the portal (`https://h/portal`), server or service (`https://h/server/rest/services/…`) URL.
    ///   - tokenInfo: the token, its expiry and whether it needs https.
    ///   - referer: the referer the token was generated with, if any; requests carrying the token send it.
    public init(url: URL, tokenInfo: TokenInfo, referer: String? = nil) {
        self.url = url
        self.info = tokenInfo
        self.boundReferer = referer ?? ""
        self.root = TokenService.root(of: url).root
        super.init()
    }

    public override var kind: Kind { .pregeneratedToken(self) }

    /// The token, while it has not expired.
    ///
    /// - Throws: `CredentialError` (`requiresSignIn`) once the token has expired: generate a new one.
    public var tokenInfo: TokenInfo {
        get async throws {
            guard info.isValid() else {
                throw CredentialError.signInRequired(
                    targetDescription,
                    because:
                        "the pregenerated token expired at \(info.expirationDate.ISO8601Format()); generate a new token"
                )
            }
            return info
        }
    }

    /// Never a user name: the token was made elsewhere.
    public override var username: String? { nil }

    public override var targetDescription: String { RedactedURL(root).description }

    /// Whether `url` is on the portal or server the token was generated for.
    public override func canBeUsed(for url: URL) -> Bool {
        OAuthUserConfiguration.url(url, isWithin: root)
    }

    public var description: String {
        "PregeneratedTokenCredential(\(RedactedURL(root)), token: <redacted>, expires \(info.expirationDate.ISO8601Format()))"
    }
}
