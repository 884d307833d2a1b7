import Foundation
import Logging

extension IAPCredential {
    /// Signs the user out at the identity provider and makes the credential unusable.
    ///
    /// 1. When the provider's discovery document advertises an RFC 7009 `revocation_endpoint` (Microsoft Entra
    ///    ID has none), the refresh token is revoked there first, best effort: a failure is logged and the
    ///    logout goes on.
    /// 2. The browser opens the configuration's `logout_url` with `client_id`, `post_logout_redirect_uri` (the
    ///    configuration's loopback redirect URL on a free port), `state` and `id_token_hint`, and a loopback
    ///    listener waits for the provider to redirect back with that `state`.
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
    /// - Returns: `true` when the identity provider confirmed the logout by redirecting back; `false` when nothing
    ///   came within `settings.timeout` (the browser session may remain).
    /// - Throws: `LoopbackError` (the redirect URL cannot be listened on, or the provider redirected back with an
    ///   `error`), `CancellationError` when the task is cancelled.
    ///
    /// `logOut(settings:)` does the same and also tells whether the tokens were revoked.
    @discardableResult
    public func invalidate(settings: SignInSettings = SignInSettings()) async throws -> Bool {
        try await logOut(settings: settings).isSessionEndConfirmed
    }

    /// Signs the user out as ``invalidate(settings:)`` does, and reports each step on its own: whether the
    /// provider confirmed the end of the browser session, and whether it revoked the tokens (a provider may confirm
    /// the one and refuse the other, leaving the tokens usable until they expire).
    ///
    /// - Throws: as ``invalidate(settings:)``.
    package func logOut(settings: SignInSettings = SignInSettings()) async throws -> IAPLogoutResult {
        keeper.invalidate()
        let record = await latestRecord()
        let revocation = await revokeAdvertised(record, settings: settings)
        let logout = RPInitiatedLogout(
            logoutURL: record.logoutURL ?? configuration.logoutURL, clientID: record.clientID, redirectURL: record.redirectURL,
            idTokenHint: record.idToken,
            successMessage: "You are signed out\(record.username.map { " (\($0))" } ?? "")."
        )
        return IAPLogoutResult(isSessionEndConfirmed: try await logout.run(settings: settings), revocation: revocation)
    }

    /// Ends the credential without a browser logout of its own, for a sign-in whose provider session another
    /// sign-in's logout ends (see `IAPSessionLogouts`): the refresh token is revoked where the provider advertises
    /// revocation, and the credential gives no token afterwards.
    func endWithoutBrowserLogout(settings: SignInSettings) async -> IAPLogoutResult.Revocation {
        keeper.invalidate()
        return await revokeAdvertised(await latestRecord(), settings: settings)
    }

    /// RFC 7009 revocation of the refresh token at the endpoint the provider advertises, if any; never throws.
    private func revokeAdvertised(_ record: StoredCredential, settings: SignInSettings) async -> IAPLogoutResult.Revocation {
        guard let authorizeURL = record.authorizeURL,
              let endpoint = await RevocationEndpointDiscovery.endpoint(forAuthorizeURL: authorizeURL, httpClient: keeper.httpClient)
        else { return .notOffered }
        let revocation = TokenRevocation(style: .rfc7009, endpoint: endpoint, record: record, target: targetDescription)
        do {
            try await revocation.send(with: keeper.httpClient, policy: RefreshPolicy(attempts: 1))
            settings.logger.debug("refresh token revoked", metadata: ["endpoint": "\(RedactedURL(endpoint))"])
            return .revoked
        } catch is CancellationError {
            return .failed("interrupted before the revocation endpoint \(RedactedURL(endpoint)) answered")
        } catch {
            settings.logger.debug("revocation before logout failed", metadata: ["error": "\(error)"])
            return .failed("\(error)")
        }
    }
}
