import Foundation

extension AuthenticationManager {
    /// Sends `request` with the credentials held for its URL, answering the server's authentication challenges.
    ///
    /// - ArcGIS tokens of the ArcGIS credential store go as `X-Esri-Authorization: Bearer …` (or `token=`, see
    ///   `arcGISTokenPlacement`), with `Referer` when the token is bound to one; IAP tokens as
    ///   `Authorization: Bearer …`; passwords, client certificates and server trusts of the network credential
    ///   store as the transport's credentials. A field or `token=` the request already carries is kept, and then
    ///   no stored credential of that kind is added.
    /// - A token that requires SSL (`TokenInfo.isSSLRequired`) is never sent over `http`: that is an error.
    /// - Challenges: ArcGIS errors 498/499 (in the JSON body, whatever the HTTP status), 401/403 with
    ///   `WWW-Authenticate` (Basic, Digest, NTLM, Negotiate; Bearer is an IAP), a host behind a known IAP
    ///   configuration answering 401 or redirecting to its identity provider, a certificate that does not verify
    ///   (server trust, with the certificate read for the handler), a server that asks for a client certificate.
    /// - Each is answered at most once per request: an expired token is renewed once on 498 (an IAP token once on
    ///   its challenge) before the handler is asked; the handler's credential is stored and the request sent
    ///   again once; a challenge after that fails with its error. It never loops.
    ///
    /// ```swift
    /// let response = try await manager.data(for: .get(URL(string: "https://gis.example.com/portal/sharing/rest/portals/self?f=json")!))
    /// ```
    ///
    /// - Returns: the server's response (any HTTP status that is not a challenge).
    /// - Throws: the challenge's error (`AuthenticationChallengeError`, or the `TransportError` of an untrusted
    ///   server) when no credential answered it; `ArcGISChallengeCancellationError` when a handler cancelled; `CredentialError`
    ///   (`insecureTransport`, or a stored credential that cannot be refreshed for a reason other than a sign-in);
    ///   `NetworkCredentialError` for a credential that cannot be stored; `TransportError`.
    public func data(for request: TransportRequest) async throws -> TransportResponse {
        try await AuthenticatedRequest(manager: self, original: request).send()
    }

    /// The IAP configurations whose hosts are known to be behind a proxy: the stored IAP credentials' and those
    /// registered with an `Authenticator` handling the ArcGIS challenges.
    var knownIAPConfigurations: [IAPConfiguration] {
        let stored = arcGISCredentialStore.credentials.compactMap { $0.kind.iap?.configuration }
        let registered = arcGISAuthenticationChallengeHandler?.iapConfigurations ?? []
        return stored + registered
    }
}
