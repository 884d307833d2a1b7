import Foundation
import PortalAuthCore
import PortalAuthTransport

/// Finds the RFC 7009 revocation endpoint an OpenID provider advertises in its discovery document
/// (`revocation_endpoint`), so that an IAP sign-out can revoke the refresh token too.
///
/// Microsoft Entra ID publishes none and is not asked.
enum RevocationEndpointDiscovery {
    /// The advertised endpoint, or `nil` when there is none, the document cannot be read, or it describes
    /// another authorize endpoint than `authorizeURL`.
    static func endpoint(forAuthorizeURL authorizeURL: URL, httpClient: any TransportClient) async -> URL? {
        guard URLNormalization.host(of: authorizeURL) != "login.microsoftonline.com",
              var components = URLComponents(url: authorizeURL, resolvingAgainstBaseURL: true)
        else { return nil }
        components.query = nil
        components.fragment = nil
        guard let bare = components.url,
              case let discoveryURL = bare.deletingLastPathComponent().appendingPathComponent(".well-known/openid-configuration"),
              let response = try? await httpClient.send(.get(discoveryURL)), response.statusCode == 200,
              let document = try? JSONValue.parse(response.body),
              let advertisedAuthorize = document["authorization_endpoint"]?.stringValue.flatMap(URL.init(string:)),
              URLNormalization.comparable(advertisedAuthorize) == URLNormalization.comparable(authorizeURL),
              let revocation = document["revocation_endpoint"]?.stringValue.flatMap(URL.init(string:)),
              revocation.host != nil
        else { return nil }
        return revocation
    }
}
