import Foundation
import PortalAuthTransport

/// Finds an identity provider's device authorization endpoint (RFC 8628 §4).
///
/// In order: the one given explicitly; for Microsoft Entra, `…/oauth2/v2.0/devicecode` beside the configuration's
/// `…/oauth2/v2.0/authorize`; else `device_authorization_endpoint` of the provider's verified OpenID Connect discovery
/// document (see `IssuerDiscovery`).
enum DeviceAuthorizationEndpoint {
    static func resolve(explicit: URL?, authorizeURL: URL, httpClient: any TransportClient) async -> URL? {
        if let explicit { return explicit }
        if let entra = entra(authorizeURL) { return entra }
        return await discovered(authorizeURL: authorizeURL, httpClient: httpClient)
    }

    /// `https://login.microsoftonline.com/{tenant}/oauth2/v2.0/devicecode` for an Entra v2.0 authorize endpoint.
    static func entra(_ authorizeURL: URL) -> URL? {
        guard URLNormalization.host(of: authorizeURL) == "login.microsoftonline.com" else { return nil }
        var components = URLComponents(url: authorizeURL, resolvingAgainstBaseURL: false)
        var parts = authorizeURL.path.split(separator: "/").map(String.init)
        guard parts.count >= 2, parts.last?.lowercased() == "authorize" else { return nil }
        parts[parts.count - 1] = "devicecode"
        components?.path = "/" + parts.joined(separator: "/")
        components?.query = nil
        components?.fragment = nil
        return components?.url
    }

    /// The verified discovery document's `device_authorization_endpoint` (found as `IssuerDiscovery` finds it: the
    /// authorize URL's folder and the folders above it), when it is a usable endpoint.
    static func discovered(authorizeURL: URL, httpClient: any TransportClient) async -> URL? {
        guard let issuer = try? await IssuerDiscovery.issuer(forAuthorizeURL: authorizeURL, httpClient: httpClient)
        else { return nil }
        return issuer.metadata?.deviceAuthorizationEndpoint
    }
}
