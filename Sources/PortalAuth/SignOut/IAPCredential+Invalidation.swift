package import Foundation
import Logging

extension IAPCredential {
    /// Signs the user out at the identity provider and makes the credential unusable.
    ///
    /// 1. The browser opens the configuration's `logout_url` with `client_id`, `post_logout_redirect_uri` (the
    ///    configuration's loopback redirect URL on a free port), `state` and `id_token_hint`, and a loopback
    ///    listener waits for the provider to redirect back with that `state`.
    /// 2. When the provider's discovery document advertises a `userinfo_endpoint`, the sign-in's access token is
    ///    tried there: a provider that returned but still accepts it gave no evidence that the session ended.
    /// 3. When it advertises an RFC 7009 `revocation_endpoint` (Microsoft Entra ID has none), the refresh token is
    ///    revoked there, best effort: a failure is reported, never thrown.
    ///
    /// `settings` supplies the browser, the time to wait, the observer (its `signInWillOpenBrowser(url:listeningOn:)`
    /// receives the logout URL without the ID token, which is for the browser only) and the logger; HTTP requests use
    /// the client the credential was made with. Whatever the outcome, the credential gives no token afterwards.
    /// Removing it from its store is the caller's job:
    ///
    /// ```swift
    /// let confirmed = (try? await credential.invalidate()) ?? false
    /// if !confirmed { print("The browser session may remain; sign out in the browser.") }
    /// try await store.remove(credential)
    /// ```
    ///
    /// - Returns: `true` when the identity provider confirmed the logout (it redirected back, and does not accept the
    ///   sign-in's access token at UserInfo any more where that can be asked); `false` when nothing came within
    ///   `settings.timeout`, or it came back without evidence of an ended session (the browser session may remain), or
    ///   no browser logout could run here (the refresh token is revoked all the same where the provider offers it).
    /// - Throws: a loopback error (a `CategorizedError`: the redirect URL cannot be listened on, or the provider redirected back with an
    ///   `error`), `CancellationError` when the task is cancelled.
    ///
    /// ``logOut(settings:)`` does the same and also tells what was revoked and what stays valid.
    @discardableResult
    public func invalidate(settings: SignInSettings = SignInSettings()) async throws -> Bool {
        try await logOut(settings: settings).isSessionEndConfirmed
    }

    /// Signs the user out as ``invalidate(settings:)`` does, and reports each step on its own: whether the
    /// provider confirmed the end of the session (see ``IAPLogoutResult`` for what counts), whether it revoked the
    /// tokens (a provider may confirm the one and refuse the other, leaving the tokens usable until they expire), and
    /// what stays valid and until when.
    ///
    /// The browser logout comes first, then the check of the access token at the provider's UserInfo endpoint, then
    /// the revocation: a revocation first would make the check refuse the token whatever the logout did.
    ///
    /// When no browser logout can run with `settings` (no browser can reach the person and nobody can paste the
    /// address back), the refresh token is still revoked where the provider advertises a revocation endpoint (that
    /// needs no browser), the credential gives no token afterwards, and the result says why the browser session
    /// stays (``IAPLogoutResult/browserLogoutSkipped``).
    ///
    /// ```swift
    /// let result = try await credential.logOut()
    /// if let reason = result.browserLogoutSkipped { print("The browser session stays: \(reason)") }
    /// if result.refreshTokenStaysValid { print("The refresh token was not revoked.") }
    /// try await store.remove(credential)
    /// ```
    ///
    /// - Throws: as ``invalidate(settings:)``.
    public func logOut(settings: SignInSettings = SignInSettings()) async throws -> IAPLogoutResult {
        keeper.invalidate()
        let record = await latestRecord()
        let endpoints = await advertisedEndpoints(record)
        if let reason = Self.browserLogoutUnavailable(settings: settings) {
            settings.logger.notice(
                "no browser logout: the browser session at the identity provider stays",
                metadata: ["reason": "\(reason)"])
            var result = IAPLogoutResult(
                isSessionEndConfirmed: false,
                revocation: await revoke(record, at: endpoints.revocation, settings: settings))
            result.browserLogoutSkipped = reason
            result.describe(record)
            return result
        }
        let logout = RPInitiatedLogout(
            logoutURL: record.logoutURL ?? configuration.logoutURL, clientID: record.clientID,
            redirectURL: record.redirectURL,
            idTokenHint: record.idToken,
            successMessage: "You are signed out\(record.username.map { " (\($0))" } ?? "")."
        )
        let returned: Bool
        do {
            returned = try await logout.run(settings: settings)
        } catch {
            // The browser logout failed (the provider answered with an error, an interruption): the revocation is
            // still done, best effort, so that the tokens end where the provider allows it.
            _ = await revoke(record, at: endpoints.revocation, settings: settings)
            throw error
        }
        let contrary =
            returned
            ? await Self.sessionStillAnswers(
                record, userInfo: endpoints.userInfo, httpClient: keeper.httpClient, settings: settings) : nil
        var result = IAPLogoutResult(
            isSessionEndConfirmed: returned && contrary == nil,
            revocation: await revoke(record, at: endpoints.revocation, settings: settings))
        result.returnWithoutEvidence = contrary
        result.describe(record)
        return result
    }

    /// Why no browser logout can run with `settings`, or nil when one can: no browser here can reach the person
    /// (an SSH session, no display, the paste-back or device-code method asked for) and the address the browser ends
    /// on cannot be pasted back (no terminal), unless the paste-back method was asked for explicitly (the logout URL
    /// is then shown for a browser on this machine, whose return to the loopback still confirms).
    package static func browserLogoutUnavailable(settings: SignInSettings) -> String? {
        guard let reason = settings.remoteReason, !settings.acceptsPastedRedirect, settings.signInMethod != .pasteBack
        else { return nil }
        return reason
    }

    /// Whether the provider still accepts the sign-in's access token at its UserInfo endpoint after it returned from
    /// its logout page: the reason there is no evidence of an ended session, or nil (refused: the session ended; or
    /// it cannot be asked: no endpoint, an expired token, no answer). Never sends or says the token anywhere else.
    static func sessionStillAnswers(
        _ record: StoredCredential, userInfo: URL?, httpClient: any TransportClient, settings: SignInSettings
    ) async -> String? {
        guard let userInfo, record.accessTokenExpiresAt > settings.clock.now.addingTimeInterval(5) else { return nil }
        let request = TransportRequest(
            method: .get, url: userInfo,
            headers: [("Accept", "application/json"), ("Authorization", "Bearer \(record.accessToken)")])
        guard let response = try? await httpClient.send(request) else { return nil }
        settings.logger.debug("session check after the logout", metadata: ["status": "\(response.statusCode)"])
        guard response.statusCode == 200 else { return nil }
        return
            "the sign-in's access token still works at its UserInfo endpoint \(RedactedURL(userInfo)), so nothing shows that the "
            + "session it belongs to ended (the browser that opened the logout page may not hold that session)"
    }

    /// Ends the credential without a browser logout of its own, for a sign-in whose provider session another
    /// sign-in's logout ends (see `IAPSessionLogouts`): the refresh token is revoked where the provider advertises
    /// revocation, and the credential gives no token afterwards. The result's session end is the other logout's to
    /// say (false here).
    func endWithoutBrowserLogout(settings: SignInSettings) async -> IAPLogoutResult {
        keeper.invalidate()
        let record = await latestRecord()
        var result = IAPLogoutResult(
            isSessionEndConfirmed: false, revocation: await revokeAdvertised(record, settings: settings))
        result.describe(record)
        return result
    }

    /// The revocation and UserInfo endpoints the sign-in's issuer advertises, if any (only its own discovery
    /// document is read: see `RevocationEndpointDiscovery`).
    private func advertisedEndpoints(_ record: StoredCredential) async -> RevocationEndpointDiscovery.Endpoints {
        guard let authorizeURL = record.authorizeURL else { return .init() }
        return await RevocationEndpointDiscovery.endpoints(
            issuer: Self.issuer(of: record), authorizeURL: authorizeURL, httpClient: keeper.httpClient)
    }

    /// The sign-in's issuer as its record keeps it: the issuer it was checked against, else (entries written before
    /// that was kept) its ID token's `iss`, which the sign-in checked; nil when neither is known.
    static func issuer(of record: StoredCredential) -> String? {
        record.issuer ?? record.idToken.flatMap(TokenClaims.init(jwt:))?.issuer
    }

    /// RFC 7009 revocation of the refresh token at the endpoint the provider advertises, if any; never throws.
    private func revokeAdvertised(_ record: StoredCredential, settings: SignInSettings) async
        -> IAPLogoutResult.Revocation
    {
        await revoke(record, at: await advertisedEndpoints(record).revocation, settings: settings)
    }

    /// RFC 7009 revocation of the refresh token at `endpoint` (nil: none offered); never throws.
    private func revoke(_ record: StoredCredential, at endpoint: URL?, settings: SignInSettings) async
        -> IAPLogoutResult.Revocation
    {
        guard let endpoint else { return .notOffered }
        let revocation = TokenRevocation(style: .rfc7009, endpoint: endpoint, record: record, target: targetDescription)
        do {
            try await revocation.send(with: keeper.httpClient, policy: RefreshPolicy(attempts: 1))
            settings.logger.debug("refresh token revoked", metadata: ["endpoint": "\(RedactedURL(endpoint))"])
            return .revoked
        } catch is CancellationError {
            return .failed("interrupted before the revocation endpoint \(RedactedURL(endpoint)) answered")
        } catch {
            settings.logger.debug("revocation after logout failed", metadata: ["error": "\(error)"])
            return .failed("\(error)")
        }
    }
}

extension IAPLogoutResult {
    /// Records what `record` leaves valid: its refresh token (where and until when) and its access token's expiry.
    mutating func describe(_ record: StoredCredential) {
        hadRefreshToken = record.refreshToken != nil
        refreshTokenExpiry = record.refreshTokenExpiresAt
        tokenEndpoint = record.tokenURL
        accessTokenExpiry = record.accessTokenExpiresAt
    }
}

extension IAPCredential {
    /// The RFC 7009 revocation endpoint the provider advertises, where a logout will revoke the refresh token; nil
    /// when it advertises none (the refresh token then stays valid after a logout). For a confirmation asked before.
    package func advertisedRevocationEndpoint() async -> URL? {
        await advertisedEndpoints(latestRecord()).revocation
    }
}
