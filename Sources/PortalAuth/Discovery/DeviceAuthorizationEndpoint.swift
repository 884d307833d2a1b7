import Foundation
import PortalAuthTransport

/// Finds an identity provider's device authorization endpoint (RFC 8628 §4).
///
/// In order: the one given explicitly; for Microsoft Entra, `…/oauth2/v2.0/devicecode` beside the configuration's
/// `…/oauth2/v2.0/authorize`; else `device_authorization_endpoint` of the provider's verified OpenID Connect discovery
/// document (see `IssuerDiscovery`).
enum DeviceAuthorizationEndpoint {
    static func resolve(explicit: URL?, authorizeURL: URL, issuer: URL? = nil, httpClient: any TransportClient) async
        -> URL?
    {
        if let explicit { return explicit }
        if let entra = entra(authorizeURL) { return entra }
        return await discovered(authorizeURL: authorizeURL, issuer: issuer, httpClient: httpClient)
    }

    /// `https://{host}/{tenant}/oauth2/v2.0/devicecode` for an Entra v2.0 authorize endpoint, in any of Entra's
    /// clouds (MicrosoftDocs/entra-docs `v2-oauth2-device-code.md`, `authentication-national-cloud.md`).
    static func entra(_ authorizeURL: URL) -> URL? {
        EntraAuthority(endpoint: authorizeURL).map(\.deviceCodeURL)
    }

    /// The verified discovery document's `device_authorization_endpoint` (found as the sign-in finds it: the
    /// configuration's `issuer`'s document when one is given, else the authorize URL's folder and the folders above
    /// it), when it is a usable endpoint: the same document, by the same rule, as the sign-in's.
    static func discovered(authorizeURL: URL, issuer explicit: URL?, httpClient: any TransportClient) async -> URL? {
        guard
            let issuer = try? await IssuerDiscovery.issuer(
                forAuthorizeURL: authorizeURL, explicit: explicit, httpClient: httpClient)
        else { return nil }
        return issuer.metadata?.deviceAuthorizationEndpoint
    }
}
