public import Foundation

/// A credential for services behind an Identity-Aware Proxy (for example the Microsoft Entra
/// application proxy), obtained through the OpenID Connect authorization-code flow with PKCE.
///
/// ```swift
/// let configuration = try await IAPConfiguration.configuration(from: URL(filePath: "iap.json"))
/// let credential = try await IAPCredential.credential(for: configuration)
/// let info = try await credential.tokenInfo
/// ```
public final class IAPCredential: ArcGISCredential, TokenKeepingCredential, @unchecked Sendable {
    /// The configuration the credential was made with.
    public let configuration: IAPConfiguration
    let keeper: TokenKeeper

    init(configuration: IAPConfiguration, keeper: TokenKeeper) {
        self.configuration = configuration
        self.keeper = keeper
        super.init()
    }

    public override var kind: Kind { .iap(self) }

    /// The authorization-code sign-in (browser or paste-back).
    ///
    /// - Parameters:
    ///   - previous: the stored sign-in this one replaces, if any: with the prompt type `none`, its ID token is sent as
    ///     `id_token_hint` (OpenID Connect Core 3.1.2.1), to the browser only.
    static func authorizationCodeCredential(
        for configuration: IAPConfiguration, presentation: AuthorizationCodeFlow.Presentation?, settings: SignInSettings,
        replacing previous: IAPCredential? = nil
    ) async throws -> IAPCredential {
        guard configuration.isLoopbackRedirect || configuration.isCustomSchemeRedirect else { throw SignInError.notLoopbackRedirect(configuration.redirectURL) }
        for warning in configuration.broadHostPatternWarnings { settings.observer.configurationWarning(warning) }
        let issuer = await IssuerDiscovery.issuer(forAuthorizeURL: configuration.authorizeURL, httpClient: settings.httpClient)
        var extra = [("scope", configuration.scopes.joined(separator: " "))]
        if configuration.authorizationPromptType != .unspecified {
            extra.append(("prompt", configuration.authorizationPromptType.rawValue))
        }
        let flow = AuthorizationCodeFlow(
            authorizeURL: configuration.authorizeURL,
            tokenURL: configuration.tokenURL,
            clientID: configuration.clientID,
            redirectURL: configuration.redirectURL,
            extraParameters: extra,
            wantsNonce: configuration.scopes.contains("openid"),
            expectedIssuer: issuer?.identifier,
            requiresIssuerInResponse: issuer?.sendsIssuerInResponses ?? false,
            successMessage: "You are signed in to \(configuration.authorizeURL.host ?? configuration.authorizeURL.absoluteString).",
            idTokenHint: configuration.authorizationPromptType == IAPAuthorizationPromptType.none ? previous?.latestRecord().idToken : nil
        )
        let result = try await flow.run(settings: settings, presentation: presentation)
        return try signedIn(configuration, tokens: result.tokens, nonce: result.request.nonce, issuer: issuer?.identifier,
                            receivedAt: result.receivedAt, settings: settings)
    }

    /// Signs the user in through the browser and returns the credential.
    ///
    /// The sign-in runs by the settings' ``SignInSettings/signInMethod`` (see
    /// ``credential(for:using:deviceAuthorizationURL:settings:replacing:)``): by default the browser where a display
    /// can show it, else the device code or paste-back, else ``SignInError`` at once.
    ///
    /// The ID token's `aud`, `nonce`, `exp` and (when the issuer can be known) `iss` are checked; with `openid` among
    /// the scopes, a token response without an ID token is refused (`SignInError`).
    ///
    /// - Parameters:
    ///   - previous: the stored sign-in this one replaces, if any: with the prompt type `none`, its ID token is sent as
    ///     `id_token_hint` (OpenID Connect Core 3.1.2.1), to the browser only.
    public static func credential(
        for configuration: IAPConfiguration, settings: SignInSettings = SignInSettings(), replacing previous: IAPCredential? = nil
    ) async throws -> IAPCredential {
        try await credential(for: configuration, using: settings.signInMethod, settings: settings, replacing: previous)
    }

    /// The credential for tokens the identity provider issued, after the ID token's checks (`aud`, `exp`, `iss` when
    /// known, `nonce` when one was sent).
    static func signedIn(
        _ configuration: IAPConfiguration, tokens: TokenResponse, nonce: String?, issuer: String?, receivedAt now: Date,
        settings: SignInSettings
    ) throws -> IAPCredential {
        var idTokenExpiry: Date?
        var username = tokens.username
        if let idToken = tokens.idToken {
            let decoded = try IDToken(compact: idToken)
            try decoded.validate(clientID: configuration.clientID, nonce: nonce, expectedIssuer: issuer, now: now)
            idTokenExpiry = decoded.expirationDate
            username = username ?? decoded.username ?? decoded.subject
        }
        if let username, let problem = TokenCharacters.problem(inUserName: username) {
            throw TokenEndpointError(.invalidResponse, endpoint: configuration.tokenURL, statusCode: 200,
                                     problem: "the user name in the ID token cannot be used: \(problem); nothing was stored")
        }
        let record = StoredCredential(
            kind: .iap, clientID: configuration.clientID, portalURL: nil, redirectURL: configuration.redirectURL,
            refreshTokenExpirationMinutes: nil, refreshTokenExchangeSeconds: nil,
            configurationFile: configuration.sourceFile.map { $0.resolvingSymlinksInPath().path },
            authorizeURL: configuration.authorizeURL, tokenURL: configuration.tokenURL, revokeURL: nil,
            logoutURL: configuration.logoutURL, hostsBehindProxy: configuration.hostsBehindProxy,
            username: username, accessToken: tokens.accessToken,
            accessTokenExpiresAt: now.addingTimeInterval((tokens.expiresIn ?? .seconds(3600)).timeInterval),
            refreshToken: tokens.refreshToken,
            refreshTokenExpiresAt: tokens.refreshTokenExpiresIn.map { now.addingTimeInterval($0.timeInterval) },
            refreshTokenIssuedAt: tokens.refreshToken == nil ? nil : now,
            idToken: tokens.idToken, idTokenExpiresAt: idTokenExpiry, scopes: tokens.scopes ?? configuration.scopes,
            tokenType: tokens.tokenType, isSSLRequired: false, createdAt: now, updatedAt: now,
            requestedScopes: configuration.scopes
        )
        return IAPCredential(record: record, configuration: configuration, persistence: nil, settings: settings)
    }

    /// Rebuilds a credential from its record (the configuration is rebuilt from it when not given).
    convenience init(record: StoredCredential, configuration: IAPConfiguration? = nil, persistence: TokenKeeper.Persistence?, settings: SignInSettings) {
        let configuration = configuration ?? IAPConfiguration(
            authorizeURL: record.authorizeURL ?? record.tokenURL, tokenURL: record.tokenURL,
            logoutURL: record.logoutURL ?? record.authorizeURL ?? record.tokenURL, clientID: record.clientID, redirectURL: record.redirectURL,
            scopes: record.requestedScopes ?? record.scopes, hostsBehindProxy: record.hostsBehindProxy, authorizationPromptType: .unspecified,
            sourceFile: record.configurationFile.map { URL(fileURLWithPath: $0) }
        )
        let target = "the IAP " + (record.configurationFile.map { "configuration \($0)" } ?? configuration.authorizeURL.absoluteString)
        let keeper = TokenKeeper(record, persistence: persistence, httpClient: settings.httpClient, policy: settings.refreshPolicy, target: target, logger: settings.logger)
        self.init(configuration: configuration, keeper: keeper)
    }

    // MARK: - Tokens

    /// Valid tokens, refreshed first when the access token expires within the refresh margin.
    public var tokenInfo: IAPTokenInfo {
        get async throws { try await tokenInfo(minimumValidity: nil) }
    }

    /// Tokens whose access token — or, with `keeping: .idToken`, whose ID token — is valid for at least
    /// `minimumValidity` (the refresh policy's margin when nil), refreshed first when needed.
    ///
    /// - Throws: `CredentialError` with `requiresSignIn` when the ID token was asked for and the provider sent no new
    ///   one on refresh (an expired ID token is never returned), or the refresh token was refused.
    public func tokenInfo(minimumValidity: Duration?, forceRefresh: Bool = false, keeping token: IAPTokenInfo.Token = .accessToken) async throws -> IAPTokenInfo {
        let record = try await keeper.validCredential(minimumValidity: minimumValidity, force: forceRefresh, keeping: token)
        return IAPTokenInfo(
            accessToken: record.accessToken, accessTokenExpirationDate: record.accessTokenExpiresAt,
            idToken: record.idToken, idTokenExpirationDate: record.idTokenExpiresAt, refreshToken: record.refreshToken,
            scopes: record.scopes, tokenType: record.tokenType
        )
    }

    /// The signed-in user (from the ID token), when known.
    public override var username: String? { keeper.current.username }

    public override var targetDescription: String { keeper.target }

    public override func canBeUsed(for url: URL) -> Bool { configuration.canBeUsed(for: url) }

    var storeKey: String {
        Self.storeKey(authorizeURL: configuration.authorizeURL, clientID: configuration.clientID, username: keeper.current.username)
    }

    /// The store key of an IAP credential (see `StoredCredential.iapKey`): the identity provider, the client ID and
    /// the user.
    static func storeKey(authorizeURL: URL, clientID: String, username: String?) -> String {
        StoredCredential.iapKey(authorizeURL: authorizeURL, clientID: clientID, username: username)
    }

    /// Whether this credential is a sign-in to the identity provider and client of `configuration` (any user).
    func isSignIn(to configuration: IAPConfiguration) -> Bool {
        URLNormalization.comparable(self.configuration.authorizeURL) == URLNormalization.comparable(configuration.authorizeURL)
            && self.configuration.clientID == configuration.clientID
    }
}
