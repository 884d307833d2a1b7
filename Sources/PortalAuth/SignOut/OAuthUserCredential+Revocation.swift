import Foundation

extension OAuthUserCredential {
    /// Revokes the credential's tokens at the portal and makes the credential unusable.
    ///
    /// Sends the refresh token to `{portal}/sharing/rest/oauth2/revokeToken` (`client_id`, `auth_token`,
    /// `token_type_hint=refresh_token`, `f=json`); revoking it revokes its access tokens too. A credential
    /// without a refresh token revokes its access token. The portal answers success also for a token it does
    /// not know; its error envelope (sent with HTTP 200) is a failure. Transient failures (network, 5xx) are
    /// tried again as the credential's `RefreshPolicy` says. The newest stored refresh token is used, so a
    /// rotation by another process since this one loaded the store does not leave a live token behind.
    ///
    /// Whatever the outcome, the credential gives no token afterwards (`tokenInfo` throws a `CredentialError`
    /// that says it was signed out); calling `revokeToken()` again retries the revocation. Removing the
    /// credential from its store is the caller's job — do it also when this throws:
    ///
    /// ```swift
    /// do {
    ///     try await credential.revokeToken()
    /// } catch {
    ///     print("The tokens stay valid on the portal until they expire: \(error)")
    /// }
    /// try await store.remove(credential)
    /// ```
    ///
    /// - Throws: a revocation error (a `CategorizedError`: refused, failed, unreachable); `CancellationError` when the task is cancelled.
    public func revokeToken() async throws {
        keeper.invalidate()
        let record = await latestRecord()
        let revocation = TokenRevocation(
            style: .arcGIS, endpoint: record.revokeURL ?? configuration.revokeURL, record: record,
            target: targetDescription)
        try await revocation.send(with: keeper.httpClient, policy: keeper.policy)
    }
}
