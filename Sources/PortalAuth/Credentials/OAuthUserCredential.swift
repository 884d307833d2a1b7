public import Foundation
import PortalAuthStore

/// A credential for an ArcGIS portal user, obtained through the OAuth 2.0 authorization-code flow
/// with PKCE in the system browser.
///
/// ```swift
/// let configuration = OAuthUserConfiguration(portalURL: URL(string: "https://www.arcgis.com")!, clientID: "abc123")
/// let credential = try await OAuthUserCredential.credential(for: configuration)
/// let token = try await credential.tokenInfo.accessToken
/// ```
public final class OAuthUserCredential: ArcGISCredential, TokenKeepingCredential, @unchecked Sendable {
    /// The configuration the credential was made with.
    public let configuration: OAuthUserConfiguration
    let keeper: TokenKeeper

    init(configuration: OAuthUserConfiguration, keeper: TokenKeeper) {
        self.configuration = configuration
        self.keeper = keeper
        super.init()
    }

    public override var kind: Kind { .oAuthUser(self) }

    /// Signs the user in through the browser and returns the credential.
    ///
    /// The sign-in runs by the settings' ``SignInSettings/signInMethod`` (see
    /// ``credential(for:using:settings:)``): by default the browser where a display can show it, else paste-back when
    /// the settings accept pasted addresses, else ``SignInError`` at once — never a browser started over SSH and a wait
    /// in silence.
    ///
    /// - Throws: `ConfigurationError` for an unusable configuration, a loopback error (a `CategorizedError`: port busy, the
    ///   portal's `error` redirect such as `access_denied`), `SignInError` (timeout, no way to reach the person),
    ///   a transport error (a `CategorizedError`), a token-endpoint error (a `CategorizedError`); `CancellationError` when the task is cancelled.
    public static func credential(
        for configuration: OAuthUserConfiguration, settings: SignInSettings = SignInSettings()
    ) async throws -> OAuthUserCredential {
        try await credential(for: configuration, using: settings.signInMethod, settings: settings)
    }

    /// The authorization-code sign-in (browser or paste-back).
    static func authorizationCodeCredential(
        for configuration: OAuthUserConfiguration, presentation: AuthorizationCodeFlow.Presentation?,
        settings: SignInSettings
    ) async throws -> OAuthUserCredential {
        try configuration.validate()
        let portal = configuration.portalURL.absoluteString
        let flow = AuthorizationCodeFlow(
            authorizeURL: configuration.authorizeURL,
            tokenURL: configuration.tokenURL,
            clientID: configuration.clientID,
            redirectURL: configuration.redirectURL,
            extraParameters: [("expiration", String(configuration.refreshTokenExpirationMinutes))],
            wantsNonce: false,
            expectedIssuer: nil,
            successMessage: "You are signed in to \(portal)."
        )
        let result = try await flow.run(settings: settings, presentation: presentation)
        return signedIn(configuration, result: result, redirectURL: configuration.redirectURL, settings: settings)
    }

    /// The credential for the tokens of a finished sign-in.
    static func signedIn(
        _ configuration: OAuthUserConfiguration, result: AuthorizationCodeFlow.Result, redirectURL: URL,
        settings: SignInSettings
    ) -> OAuthUserCredential {
        let now = result.receivedAt
        let tokens = result.tokens
        let record = StoredCredential(
            kind: .oauthUser, clientID: configuration.clientID, portalURL: configuration.portalURL,
            redirectURL: redirectURL,
            refreshTokenExpirationMinutes: configuration.refreshTokenExpirationMinutes,
            refreshTokenExchangeSeconds: Int(configuration.refreshTokenExchangeInterval.components.seconds),
            configurationFile: nil, authorizeURL: configuration.authorizeURL, tokenURL: configuration.tokenURL,
            revokeURL: configuration.revokeURL, logoutURL: nil, hostsBehindProxy: [],
            username: tokens.username, accessToken: tokens.accessToken,
            accessTokenExpiresAt: now.addingTimeInterval((tokens.expiresIn ?? .seconds(1800)).timeInterval),
            accessTokenIssuedAt: now,
            refreshToken: tokens.refreshToken,
            refreshTokenExpiresAt: tokens.refreshToken == nil
                ? nil
                : now.addingTimeInterval(
                    (tokens.refreshTokenExpiresIn ?? configuration.refreshTokenExpirationInterval).timeInterval),
            refreshTokenIssuedAt: tokens.refreshToken == nil ? nil : now,
            idToken: nil, idTokenExpiresAt: nil, scopes: tokens.scopes ?? [], tokenType: tokens.tokenType,
            isSSLRequired: tokens.isSSLRequired ?? false, createdAt: now, updatedAt: now
        )
        return OAuthUserCredential(record: record, persistence: nil, settings: settings)
    }

    /// Rebuilds a credential from its record.
    convenience init(record: StoredCredential, persistence: TokenKeeper.Persistence?, settings: SignInSettings) {
        let configuration = OAuthUserConfiguration(
            portalURL: record.portalURL ?? record.tokenURL, clientID: record.clientID, redirectURL: record.redirectURL,
            refreshTokenExpirationInterval: .seconds(60 * (record.refreshTokenExpirationMinutes ?? 20160)),
            refreshTokenExchangeInterval: .seconds(record.refreshTokenExchangeSeconds ?? 86400)
        )
        let keeper = TokenKeeper(
            record, persistence: persistence, httpClient: settings.httpClient,
            policy: settings.refreshPolicy, target: "the portal \(configuration.portalURL.absoluteString)",
            logger: settings.logger)
        self.init(configuration: configuration, keeper: keeper)
    }

    // MARK: - Tokens

    /// A valid access token, refreshed first when it expires within the refresh margin.
    public var tokenInfo: TokenInfo {
        get async throws { try await tokenInfo(minimumValidity: nil) }
    }

    /// A token valid for at least `minimumValidity` (the refresh policy's margin when nil).
    public func tokenInfo(minimumValidity: Duration?, forceRefresh: Bool = false) async throws -> TokenInfo {
        try tokenInfo(of: await keeper.validCredential(minimumValidity: minimumValidity, force: forceRefresh))
    }

    /// Whether `tokenInfo(minimumValidity:)` hands out the token held as it is, with no refresh and no store write.
    package func holdsFreshToken(minimumValidity: Duration) -> Bool {
        keeper.holdsFreshTokens(minimumValidity: minimumValidity)
    }

    /// The access token of `record`, a valid stored sign-in of this credential; a sign-in is needed when it is empty.
    func tokenInfo(of record: StoredCredential) throws -> TokenInfo {
        guard
            let info = TokenInfo(
                accessToken: record.accessToken, expirationDate: record.accessTokenExpiresAt,
                isSSLRequired: record.isSSLRequired)
        else {
            throw CredentialError.signInRequired(targetDescription, because: "the stored access token is empty")
        }
        return info
    }

    /// The portal user name the token belongs to.
    public override var username: String? { keeper.current.username }

    /// When the tokens held were issued (the sign-in or the last refresh).
    package var tokensIssuedAt: Date { keeper.current.updatedAt }

    /// When the refresh token expires, when known.
    public var refreshTokenExpirationDate: Date? { keeper.current.refreshTokenExpiresAt }

    public override var targetDescription: String { "the portal \(configuration.portalURL.absoluteString)" }

    public override func canBeUsed(for url: URL) -> Bool { configuration.canBeUsed(for: url) }

    var storeKey: String { Self.storeKey(portalURL: configuration.portalURL, clientID: configuration.clientID) }

    /// The store key of an OAuth user credential: portal URL (normalised) and client ID.
    static func storeKey(portalURL: URL, clientID: String) -> String {
        StoredCredential.oauthUserKey(portalURL: portalURL, clientID: clientID)
    }
}
