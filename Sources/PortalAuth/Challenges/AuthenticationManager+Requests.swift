import Foundation
import PortalAuthStore
import PortalAuthTransport

extension AuthenticationManager {
    /// Sends `request` with the credentials held for its URL, answering the server's authentication challenges.
    ///
    /// - ArcGIS tokens of the ArcGIS credential store go as `X-Esri-Authorization: Bearer …` (or `token=`, see
    ///   `arcGISTokenPlacement`), with `Referer` when the token is bound to one; to hosts behind an
    ///   Identity-Aware Proxy, the IAP credential's ID token (as the ArcGIS Maps SDK sends it; the access token when
    ///   `IAPCredential.tokenSentToProxy` says so, or when no ID token is held) as `Authorization: Bearer …`,
    ///   refreshed first when it has expired; passwords, client certificates and server trusts of the network credential
    ///   store as the transport's credentials. A field or `token=` the request already carries is kept, and then
    ///   no stored credential of that kind is added.
    /// - A token that requires SSL (`TokenInfo.isSSLRequired`) is never sent over `http`: that is an error.
    /// - Challenges: ArcGIS errors 498/499 (in the JSON body, whatever the HTTP status; `.token` for a stand-alone
    ///   server, `.oAuthOrToken` otherwise), 401/403 with `WWW-Authenticate` (Basic, Digest, NTLM, Negotiate), an
    ///   Identity-Aware Proxy asking for a sign-in (`.iap`), a certificate that does not verify (server trust, with
    ///   the certificate read for the handler), a server that asks for a client certificate.
    /// - A proxy's sign-in request is recognised from any proxy: a `Bearer` challenge, a redirect to an OAuth/OIDC
    ///   authorization request (`client_id` and `response_type` in its query), a 401 to a request that carried a
    ///   bearer token. From hosts known to be behind a proxy (the IAP credentials in the store,
    ///   `iapConfigurations`, an `Authenticator`'s `iapConfigurations`) also a bare 401, a redirect to the identity
    ///   provider, to the proxy's own sign-in page or to another host's sign-in path, and an HTML page that posts
    ///   itself to the identity provider. Ordinary redirects (http → https, a trailing slash, a path below the one
    ///   asked for, a CDN) are answers.
    /// - Each is answered at most once per request: an expired token is renewed once on 498 before the handler is
    ///   asked; an IAP token the proxy refuses is refreshed once when it is at least a minute old, and a fresh
    ///   one refused fails at once with `.iapTokenRefused` (no refresh token spent per call); the handler's
    ///   credential is stored and the request sent again once; a challenge after that fails with its error. It
    ///   never loops.
    ///
    /// ```swift
    /// let response = try await manager.data(for: .get(URL(string: "https://gis.example.com/portal/sharing/rest/portals/self?f=json")!))
    /// ```
    ///
    /// - Returns: the server's response (any HTTP status that is not a challenge).
    /// - Throws: the challenge's error (`AuthenticationChallengeError`, or a transport error (a `CategorizedError`) of an untrusted
    ///   server) when no credential answered it; `ArcGISChallengeCancellationError` when a handler cancelled; `CredentialError`
    ///   (`insecureTransport`, or a stored credential that cannot be refreshed for a reason other than a sign-in);
    ///   a network-credential error (a `CategorizedError`) for a credential that cannot be stored; a transport error (a `CategorizedError`).
    public func data(for request: TransportRequest) async throws -> TransportResponse {
        try await AuthenticatedRequest(manager: self, original: request).send()
    }

    /// The IAP configurations whose hosts are known to be behind a proxy: the stored IAP credentials', those
    /// registered with the manager, and those of an `Authenticator` handling the ArcGIS challenges.
    var knownIAPConfigurations: [IAPConfiguration] {
        let stored = arcGISCredentialStore.credentials.compactMap { $0.kind.iap?.configuration }
        let authenticator = (arcGISAuthenticationChallengeHandler as? Authenticator)?.iapConfigurations ?? []
        return stored + iapConfigurations + authenticator
    }
}
