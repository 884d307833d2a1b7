public import Foundation

/// A credential for services behind an Identity-Aware Proxy (for example the Microsoft Entra
/// application proxy), obtained through the OpenID Connect authorization-code flow with PKCE.
///
/// ```swift
/// let configuration = try await IAPConfiguration.configuration(from: URL(filePath: "iap.json"))
/// let credential = try await IAPCredential.credential(for: configuration)
/// let info = try await credential.tokenInfo
/// ```
public final class IAPCredential: TokenKeepingCredential {
    /// The configuration the credential was made with.
    public let configuration: IAPConfiguration
    let keeper: TokenKeeper

    init(configuration: IAPConfiguration, keeper: TokenKeeper) {
        self.configuration = configuration
        self.keeper = keeper
    }

    /// The authorization-code sign-in (browser or paste-back).
    static func authorizationCodeCredential(
        for configuration: IAPConfiguration, presentation: AuthorizationCodeFlow.Presentation?, settings: SignInSettings
    ) async throws -> IAPCredential {
        guard configuration.isLoopbackRedirect else { throw SignInError.notLoopbackRedirect(configuration.redirectURL) }
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
            successMessage: "You are signed in. You can close this tab and return to your terminal."
        )
        let result = try await flow.run(settings: settings, presentation: presentation)
        return try signedIn(configuration, tokens: result.tokens, nonce: result.request.nonce, issuer: issuer?.identifier,
                            receivedAt: result.receivedAt, settings: settings)
    }

    /// Signs the user in through the browser and returns the credential.
    ///
    /// The ID token's `aud`, `nonce`, `exp` and (when the issuer can be known) `iss` are checked.
    public static func credential(for configuration: IAPConfiguration, settings: SignInSettings = SignInSettings()) async throws -> IAPCredential {
        try await authorizationCodeCredential(for: configuration, presentation: nil, settings: settings)
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
            idToken: tokens.idToken, idTokenExpiresAt: idTokenExpiry, scopes: configuration.scopes,
            tokenType: tokens.tokenType, isSSLRequired: false, createdAt: now, updatedAt: now
        )
        return IAPCredential(record: record, configuration: configuration, persistence: nil, settings: settings)
    }

    /// Rebuilds a credential from its record (the configuration is rebuilt from it when not given).
    convenience init(record: StoredCredential, configuration: IAPConfiguration? = nil, persistence: TokenKeeper.Persistence?, settings: SignInSettings) {
        let configuration = configuration ?? IAPConfiguration(
            authorizeURL: record.authorizeURL ?? record.tokenURL, tokenURL: record.tokenURL,
            logoutURL: record.logoutURL ?? record.authorizeURL ?? record.tokenURL, clientID: record.clientID, redirectURL: record.redirectURL,
            scopes: record.scopes, hostsBehindProxy: record.hostsBehindProxy, authorizationPromptType: .unspecified,
            sourceFile: record.configurationFile.map { URL(fileURLWithPath: $0) }
        )
        let target = "the IAP " + (record.configurationFile.map { "configuration \($0)" } ?? configuration.authorizeURL.absoluteString)
        let keeper = TokenKeeper(record, persistence: persistence, httpClient: settings.httpClient, policy: settings.refreshPolicy, target: target)
        self.init(configuration: configuration, keeper: keeper)
    }

    // MARK: - Tokens

    /// Valid tokens, refreshed first when the access token expires within the refresh margin.
    public var tokenInfo: IAPTokenInfo {
        get async throws { try await tokenInfo(minimumValidity: nil) }
    }

    /// Tokens whose access token is valid for at least `minimumValidity`.
    public func tokenInfo(minimumValidity: Duration?, forceRefresh: Bool = false) async throws -> IAPTokenInfo {
        let record = try await keeper.validCredential(minimumValidity: minimumValidity, force: forceRefresh)
        return IAPTokenInfo(
            accessToken: record.accessToken, accessTokenExpirationDate: record.accessTokenExpiresAt,
            idToken: record.idToken, idTokenExpirationDate: record.idTokenExpiresAt, refreshToken: record.refreshToken,
            scopes: record.scopes, tokenType: record.tokenType
        )
    }

    /// The signed-in user (from the ID token), when known.
    public var username: String? { keeper.current.username }

    public var targetDescription: String { keeper.target }

    public func canBeUsed(for url: URL) -> Bool { configuration.canBeUsed(for: url) }

    var storeKey: String {
        StoredCredential.iapKey(configurationFile: keeper.current.configurationFile, authorizeURL: configuration.authorizeURL, clientID: configuration.clientID)
    }
}
