public import Foundation
import Logging
import PortalAuthCore
import PortalAuthStore
import PortalAuthTransport
import Synchronization

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
    /// See `tokenSentToProxy`.
    private let proxyTokenChoice: Mutex<IAPTokenInfo.Token>

    /// The configuration file's current contents when they name another identity provider or client than this
    /// sign-in was made with (`IAPConfigurationChange`); nil when they do not, or the file cannot be read.
    package let configurationChange: ConfigurationChange?

    /// What the configuration file says now, when it names another provider or client than the sign-in.
    package struct ConfigurationChange: Sendable {
        /// The file's configuration now.
        package let current: IAPConfiguration
        /// What differs, one phrase each ("client_id is now X (the sign-in's: Y)").
        package let differences: [String]
    }

    init(configuration: IAPConfiguration, keeper: TokenKeeper, configurationChange: ConfigurationChange? = nil) {
        self.configuration = configuration
        self.keeper = keeper
        proxyTokenChoice = Mutex(keeper.current.proxyToken ?? .idToken)
        self.configurationChange = configurationChange
        super.init()
    }

    public override var kind: Kind { .iap(self) }

    /// The authorization-code sign-in (browser or paste-back).
    ///
    /// - Parameters:
    ///   - previous: the stored sign-in this one replaces, if any: with the prompt type `none`, its ID token is sent as
    ///     `id_token_hint` (OpenID Connect Core 3.1.2.1), to the browser only.
    static func authorizationCodeCredential(
        for configuration: IAPConfiguration, presentation: AuthorizationCodeFlow.Presentation?,
        settings: SignInSettings,
        replacing previous: IAPCredential? = nil
    ) async throws -> IAPCredential {
        guard configuration.isLoopbackRedirect || configuration.isCustomSchemeRedirect else {
            throw SignInError.notLoopbackRedirect(configuration.redirectURL)
        }
        for warning in configuration.broadHostPatternWarnings { settings.observer.configurationWarning(warning) }
        // Before the browser opens: a lying discovery document stops the sign-in here (mix-up, RFC 9700 §4.4).
        let issuer = try await IssuerDiscovery.issuer(
            forAuthorizeURL: configuration.authorizeURL, explicit: configuration.issuer, httpClient: settings.httpClient
        )
        if let warning = IssuerDiscovery.tokenEndpointWarning(issuer, tokenURL: configuration.tokenURL) {
            settings.observer.configurationWarning(warning)
        }
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
            expectedIssuer: issuer?.exactIdentifier,
            requiresIssuerInResponse: issuer?.sendsIssuerInResponses ?? false,
            successMessage:
                "You are signed in to \(configuration.authorizeURL.host ?? configuration.authorizeURL.absoluteString).",
            idTokenHint: configuration.authorizationPromptType == IAPAuthorizationPromptType.none
                ? await previous?.latestRecord().idToken : nil
        )
        let result = try await flow.run(settings: settings, presentation: presentation)
        return try await signedIn(
            configuration, tokens: result.tokens, nonce: result.request.nonce, issuer: issuer,
            receivedAt: result.receivedAt, settings: settings)
    }

    /// Signs the user in through the browser and returns the credential.
    ///
    /// The sign-in runs by the settings' ``SignInSettings/signInMethod`` (see
    /// ``credential(for:using:deviceAuthorizationURL:settings:replacing:)``): by default the browser where a display
    /// can show it, else the device code or paste-back, else ``SignInError`` at once.
    ///
    /// The ID token's signature (with the keys of the provider's discovery document), `aud`, `nonce`, `exp`, `iat`,
    /// `sub` and `iss` are checked (an ID-token error (a `CategorizedError`)); with `openid` among the scopes, a token response without an ID
    /// token is refused (`SignInError`). A discovery document that names the configured authorize endpoint but
    /// another issuer than its own address stops the sign-in before the browser opens (a discovery error (a `CategorizedError`)); a
    /// UserInfo answer about another user fails it (a UserInfo error (a `CategorizedError`)). See ``IAPConfiguration/issuer``.
    ///
    /// - Parameters:
    ///   - configuration: the identity provider, client and scopes to sign in with.
    ///   - settings: the browser, the sign-in method, the observer, the clock and the time limit of the sign-in.
    ///   - previous: the stored sign-in this one replaces, if any: with the prompt type `none`, its ID token is sent as
    ///     `id_token_hint` (OpenID Connect Core 3.1.2.1), to the browser only.
    public static func credential(
        for configuration: IAPConfiguration, settings: SignInSettings = SignInSettings(),
        replacing previous: IAPCredential? = nil
    ) async throws -> IAPCredential {
        try await credential(for: configuration, using: settings.signInMethod, settings: settings, replacing: previous)
    }

    /// The credential for tokens the identity provider issued, after the ID token's checks (`aud`, `exp`, `iat`, `sub`,
    /// `iss` — exactly when the issuer is known, else its origin —, `nonce` when one was sent, and the signature
    /// against the provider's keys: without them the ID token is refused, unless it is the `alg: none` the provider's
    /// discovery document lists, from an https token endpoint).
    static func signedIn(
        _ configuration: IAPConfiguration, tokens: TokenResponse, nonce: String?, issuer known: IssuerDiscovery.Issuer?,
        receivedAt now: Date,
        settings: SignInSettings
    ) async throws -> IAPCredential {
        var idTokenExpiry: Date?
        var username = tokens.username
        var userInfo: UserInfo?
        var issuer = known?.exactIdentifier
        if let idToken = tokens.idToken {
            let decoded = try IDToken(compact: idToken)
            if let known { issuer = try known.expectedIssuer(of: decoded) }
            try decoded.validate(clientID: configuration.clientID, nonce: nonce, expectedIssuer: issuer, now: now)
            // With no issuer known, an ID token from another origin than the authorize endpoint names another
            // provider (mix-up): refused, and said so before the signature (which cannot verify without keys either).
            if issuer == nil, !IssuerDiscovery.isSameOrigin(decoded.issuer, as: configuration.authorizeURL) {
                throw IDTokenError.claimMismatch(
                    "iss",
                    "issued by \(DisplayText.neutralised(decoded.issuer, limit: 200)), another origin than the authorize endpoint "
                        + "\(RedactedURL(configuration.authorizeURL)), and no issuer is known (if this is right, give the issuer explicitly)"
                )
            }
            try await IDTokenSignature.verify(
                decoded, jwksURI: known?.metadata?.jwksURI, signsWithNone: known?.metadata?.signsWithNone ?? false,
                tokenURL: configuration.tokenURL, httpClient: settings.httpClient, now: now)
            idTokenExpiry = decoded.expirationDate
            username = username ?? decoded.username ?? decoded.subject
            // UserInfo (OIDC Core §5.3), when discovery names it: its sub must be the ID token's, or the sign-in fails;
            // an endpoint that cannot be read is reported and the sign-in goes on.
            if let endpoint = known?.metadata?.userinfoEndpoint, let subject = decoded.subject,
                Self.userInfoCanAnswer(known, accessToken: tokens.accessToken)
            {
                do {
                    userInfo = try await UserInfo.fetch(
                        from: endpoint, accessToken: tokens.accessToken, expectedSubject: subject,
                        httpClient: settings.httpClient)
                } catch  where error.isSubjectMismatch {
                    throw error
                } catch {
                    settings.logger.warning(
                        "the UserInfo endpoint could not be read; signed in without it",
                        metadata: ["reason": "\(error)"])
                    settings.observer.configurationWarning(
                        "\(error); the sign-in goes on without the name and e-mail address it gives")
                }
            }
        }
        if let username, let problem = TokenCharacters.problem(inUserName: username) {
            throw TokenEndpointError(
                .invalidResponse, endpoint: configuration.tokenURL, statusCode: 200,
                problem: "the user name in the ID token cannot be used: \(problem); nothing was stored")
        }
        var record = StoredCredential(
            kind: .iap, clientID: configuration.clientID, portalURL: nil, redirectURL: configuration.redirectURL,
            refreshTokenExpirationMinutes: nil, refreshTokenExchangeSeconds: nil,
            configurationFile: configuration.sourceFile.map { $0.resolvingSymlinksInPath().path },
            authorizeURL: configuration.authorizeURL, tokenURL: configuration.tokenURL, revokeURL: nil,
            logoutURL: configuration.logoutURL, hostsBehindProxy: configuration.hostsBehindProxy,
            username: username, accessToken: tokens.accessToken,
            accessTokenExpiresAt: now.addingTimeInterval((tokens.expiresIn ?? .seconds(3600)).timeInterval),
            accessTokenIssuedAt: now,
            refreshToken: tokens.refreshToken,
            refreshTokenExpiresAt: tokens.refreshTokenExpiresIn.map { now.addingTimeInterval($0.timeInterval) },
            refreshTokenIssuedAt: tokens.refreshToken == nil ? nil : now,
            idToken: tokens.idToken, idTokenExpiresAt: idTokenExpiry,
            idTokenIssuedAt: tokens.idToken == nil ? nil : now, scopes: tokens.scopes ?? configuration.scopes,
            tokenType: tokens.tokenType, isSSLRequired: false, createdAt: now, updatedAt: now,
            requestedScopes: configuration.scopes
        )
        record.jwksURI = known?.metadata?.jwksURI
        record.signsIDTokensWithNone = known?.metadata?.signsWithNone ?? false
        record.issuer = tokens.idToken == nil ? known?.exactIdentifier : issuer
        record.providerMetadataLookedUp = true
        record.userInfoName = userInfo?.name
        record.userInfoEmail = userInfo?.email
        return IAPCredential(record: record, configuration: configuration, persistence: nil, settings: settings)
    }

    /// Whether the UserInfo endpoint of `issuer`'s document can answer for `accessToken`.
    ///
    /// Microsoft Entra's UserInfo is Microsoft Graph's and accepts only Graph-audience access tokens (MicrosoftDocs/
    /// entra-docs `userinfo.md`: "you can't use … a token for your own API … with the UserInfo endpoint"); a sign-in
    /// for an application proxy's scope (`{client}/.default`) holds another audience, so asking would be a certain
    /// 401 and a warning on every sign-in. Other providers are asked.
    static func userInfoCanAnswer(_ issuer: IssuerDiscovery.Issuer?, accessToken: String) -> Bool {
        guard issuer?.entra != nil else { return true }
        guard let claims = TokenClaims(jwt: accessToken) else { return false }
        return claims.audiences.contains { EntraAuthority.graphAudiences.contains($0.lowercased()) }
    }

    /// Rebuilds a credential from its record (the configuration is rebuilt from it when not given).
    convenience init(
        record: StoredCredential, configuration: IAPConfiguration? = nil, persistence: TokenKeeper.Persistence?,
        settings: SignInSettings,
        configurationChange: ConfigurationChange? = nil
    ) {
        let configuration = configuration ?? Self.storedConfiguration(of: record)
        let target =
            "the IAP "
            + (record.configurationFile.map { "configuration \(DisplayText.path($0))" }
                ?? configuration.authorizeURL.absoluteString)
        let keeper = TokenKeeper(
            record, persistence: persistence, httpClient: settings.httpClient, policy: settings.refreshPolicy,
            target: target, logger: settings.logger)
        self.init(configuration: configuration, keeper: keeper, configurationChange: configurationChange)
    }

    /// The copy of the configuration a record keeps.
    static func storedConfiguration(of record: StoredCredential) -> IAPConfiguration {
        IAPConfiguration(
            authorizeURL: record.authorizeURL ?? record.tokenURL, tokenURL: record.tokenURL,
            logoutURL: record.logoutURL ?? record.authorizeURL ?? record.tokenURL, clientID: record.clientID,
            redirectURL: record.redirectURL,
            scopes: record.requestedScopes ?? record.scopes, hostsBehindProxy: record.hostsBehindProxy,
            authorizationPromptType: .unspecified,
            sourceFile: record.configurationFile.map { URL(fileURLWithPath: $0) }
        )
    }

    // MARK: - Tokens

    /// Valid tokens, refreshed first when the access token expires within the refresh margin.
    public var tokenInfo: IAPTokenInfo {
        get async throws { try await tokenInfo(minimumValidity: nil) }
    }

    /// Whether `tokenInfo(minimumValidity:keeping:)` hands out the tokens held as they are, with no refresh and no
    /// store write.
    package func holdsFreshToken(minimumValidity: Duration, keeping token: IAPTokenInfo.Token) -> Bool {
        keeper.holdsFreshTokens(minimumValidity: minimumValidity, keeping: token)
    }

    /// Tokens whose access token — or, with `keeping: .idToken`, whose ID token — is valid for at least
    /// `minimumValidity` (the refresh policy's margin when nil), refreshed first when needed.
    ///
    /// - Throws: `CredentialError` with `requiresSignIn` when the ID token was asked for and the provider sent no new
    ///   one on refresh (an expired ID token is never returned), or the refresh token was refused.
    public func tokenInfo(
        minimumValidity: Duration?, forceRefresh: Bool = false, keeping token: IAPTokenInfo.Token = .accessToken
    ) async throws -> IAPTokenInfo {
        let record = try await keeper.validCredential(
            minimumValidity: minimumValidity, force: forceRefresh, keeping: token)
        return IAPTokenInfo(
            accessToken: record.accessToken, accessTokenExpirationDate: record.accessTokenExpiresAt,
            idToken: record.idToken, idTokenExpirationDate: record.idTokenExpiresAt, refreshToken: record.refreshToken,
            scopes: record.scopes, tokenType: record.tokenType
        )
    }

    /// Which token `AuthenticationManager.data(for:)` sends to the hosts behind the proxy, as
    /// `Authorization: Bearer`: the ID token by default, as the ArcGIS Maps SDK does (Esri's reference for
    /// `IAPConfiguration.hostsBehindProxy`: the patterns say where the SDK "applies the ID token").
    ///
    /// Set `.accessToken` for a proxy that checks access tokens instead (Microsoft's guide for native clients of
    /// the Entra application proxy has them send an access token for the proxied app's scope; a mod_auth_openidc
    /// proxy may check either). It is a setting of this object, not of the configuration file (the SDK's files
    /// have no such key). The choice is kept with the credential: it is written with it to a persistent store
    /// (`ArcGISCredentialStore.addAndPersist(_:)`, and with each refresh's tokens), and a credential loaded from the
    /// store starts with it; without a kept choice, the ID token. A sign-in without an ID token (no `openid` scope)
    /// sends its access token whatever this says.
    ///
    /// ```swift
    /// credential.tokenSentToProxy = .accessToken
    /// try await store.addAndPersist(credential)   // the next process sends the access token too
    /// ```
    public var tokenSentToProxy: IAPTokenInfo.Token {
        get { proxyTokenChoice.withLock { $0 } }
        set {
            proxyTokenChoice.withLock { $0 = newValue }
            keeper.update { $0.proxyToken = newValue }
        }
    }

    /// Sends `token` to the hosts behind the proxy from now on in this process only, without keeping the choice with
    /// the credential (the tool's `--proxy-token` for one run).
    package func sendToProxyForThisProcess(_ token: IAPTokenInfo.Token) {
        proxyTokenChoice.withLock { $0 = token }
    }

    /// The choice of `tokenSentToProxy` kept with the sign-in in its store record: nil when none was kept (then the
    /// ID token). A credential read from the store starts with it; setting it also sets `tokenSentToProxy`, and is
    /// written with the credential when it is next added to a store (set it before).
    package var storedTokenSentToProxy: IAPTokenInfo.Token? {
        get { keeper.current.proxyToken }
        set {
            keeper.update { $0.proxyToken = newValue }
            proxyTokenChoice.withLock { $0 = newValue ?? .idToken }
        }
    }

    /// The token to send to the hosts behind the proxy (see `tokenSentToProxy`), valid for at least
    /// `minimumValidity` (the refresh policy's margin when nil): an ID token that expired, or expires within it, is
    /// refreshed first, and never sent expired.
    ///
    /// - Returns: the token, its kind (`.accessToken` when no ID token is held), and when it expires.
    /// - Throws: as `tokenInfo(minimumValidity:forceRefresh:keeping:)`.
    public func proxyToken(minimumValidity: Duration? = nil, forceRefresh: Bool = false) async throws -> (
        value: String, kind: IAPTokenInfo.Token, expirationDate: Date
    ) {
        let sendsIDToken = tokenSentToProxy == .idToken && keeper.current.idToken != nil
        let info = try await tokenInfo(
            minimumValidity: minimumValidity, forceRefresh: forceRefresh,
            keeping: sendsIDToken ? .idToken : .accessToken)
        if sendsIDToken, let idToken = info.idToken, let expiry = info.idTokenExpirationDate {
            return (idToken, .idToken, expiry)
        }
        return (info.accessToken, .accessToken, info.accessTokenExpirationDate)
    }

    /// Renews the token sent to the proxy after the proxy refused `refused`, unless it is no longer the current token
    /// (another request renewed it already: one renewal per refusal, however many requests saw it).
    func renewProxyToken(refused: String) async throws {
        let sendsIDToken = tokenSentToProxy == .idToken && keeper.current.idToken != nil
        _ = try await keeper.validCredential(
            force: true, refused: refused, keeping: sendsIDToken ? .idToken : .accessToken)
    }

    /// When the tokens held were issued (the sign-in or the last refresh).
    package var tokensIssuedAt: Date { keeper.current.updatedAt }

    /// The signed-in user (from the ID token), when known.
    public override var username: String? { keeper.current.username }

    public override var targetDescription: String { keeper.target }

    public override func canBeUsed(for url: URL) -> Bool { configuration.canBeUsed(for: url) }

    var storeKey: String {
        Self.storeKey(
            authorizeURL: configuration.authorizeURL, clientID: configuration.clientID,
            username: keeper.current.username)
    }

    /// The store key of an IAP credential (see `StoredCredential.iapKey`): the identity provider, the client ID and
    /// the user.
    static func storeKey(authorizeURL: URL, clientID: String, username: String?) -> String {
        StoredCredential.iapKey(authorizeURL: authorizeURL, clientID: clientID, username: username)
    }

    /// Whether this credential is a sign-in to the identity provider and client of `configuration` (any user).
    func isSignIn(to configuration: IAPConfiguration) -> Bool {
        URLNormalization.comparable(self.configuration.authorizeURL)
            == URLNormalization.comparable(configuration.authorizeURL)
            && self.configuration.clientID == configuration.clientID
    }
}

extension IAPCredential {
    /// Why the ID token of the last refresh was refused (it failed a check of its format, audience, issuer or
    /// expiry), or nil when the last one was accepted.
    ///
    /// A refused ID token does not cost the sign-in: the refresh's access and refresh tokens were kept (with a
    /// rotating provider the previous refresh token is already dead), and `tokenInfo.idToken` is still the ID
    /// token accepted before. The text names the check that failed; it never contains a token.
    public var idTokenRefusal: String? { keeper.current.idTokenRefusal }
}
