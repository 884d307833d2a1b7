import Foundation
import PortalAuthCore
import PortalAuthTransport

/// Which kind of ArcGIS challenge a token-secured resource raises: `.token` for a stand-alone ArcGIS Server (token
/// authentication only), `.oAuthOrToken` for a portal and for a server federated with one.
enum TokenChallengeKind {
    /// The kind for a 498/499 from `url`.
    ///
    /// A portal URL (a `sharing` segment, or no `rest` segment) is `.oAuthOrToken` at once. For a server URL
    /// (`…/rest/…`) `{root}/rest/info?f=json` is read: an `authInfo` without `owningSystemUrl` is a stand-alone
    /// server, `.token`; a federated server, or an answer that says neither, is `.oAuthOrToken`.
    static func kind(for url: URL, httpClient: any TransportClient) async -> ArcGISAuthenticationChallenge.Kind {
        let (root, isServer) = TokenService.root(of: url)
        guard isServer,
            var components = URLComponents(url: root.appending(path: "rest/info"), resolvingAgainstBaseURL: true)
        else {
            return .oAuthOrToken
        }
        components.queryItems = [URLQueryItem(name: "f", value: "json")]
        guard let infoURL = components.url,
            let response = try? await httpClient.send(.get(infoURL)), response.isSuccess
        else { return .oAuthOrToken }
        return kind(ofServerInfo: response.body)
    }

    /// `.token` when the `rest/info` document names a token service and no owning portal.
    static func kind(ofServerInfo body: Data) -> ArcGISAuthenticationChallenge.Kind {
        guard let json = try? JSONValue.parse(body), let authInfo = json["authInfo"]?.objectValue,
            authInfo["isTokenBasedSecurity"]?.boolValue != false
        else { return .oAuthOrToken }
        let owner = json["owningSystemUrl"]?.stringValue ?? authInfo["owningSystemUrl"]?.stringValue
        return (owner?.isEmpty ?? true) ? .token : .oAuthOrToken
    }
}
