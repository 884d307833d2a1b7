import Foundation
import PortalAuthCore
import PortalAuthStore
import PortalAuthTransport

/// An OpenID provider's discovery document (OpenID Connect Discovery §3) after `IssuerDiscovery` verified it: its
/// `issuer` is the URL it was fetched for and its `authorization_endpoint` the configured one.
struct ProviderMetadata: Sendable, Equatable {
    /// The issuer identifier (`issuer`), compared exactly with `iss`.
    let issuer: String
    /// `token_endpoint`.
    let tokenEndpoint: URL?
    /// `jwks_uri`: the keys ID tokens are signed with.
    let jwksURI: URL?
    /// `userinfo_endpoint`.
    let userinfoEndpoint: URL?
    /// `device_authorization_endpoint` (RFC 8628).
    let deviceAuthorizationEndpoint: URL?
    /// `id_token_signing_alg_values_supported` (empty when absent).
    let idTokenSigningAlgorithms: [String]
    /// `authorization_response_iss_parameter_supported` (RFC 9207 §3).
    let sendsIssuerInResponses: Bool

    init(issuer: String, document: JSONObject) {
        func endpoint(_ key: String) -> URL? {
            guard let text = document[key]?.stringValue, let url = URLRules.url(from: text), URLRules.endpointProblem(url) == nil else { return nil }
            return url
        }
        self.issuer = issuer
        tokenEndpoint = endpoint("token_endpoint")
        jwksURI = endpoint("jwks_uri")
        userinfoEndpoint = endpoint("userinfo_endpoint")
        deviceAuthorizationEndpoint = endpoint("device_authorization_endpoint")
        idTokenSigningAlgorithms = document["id_token_signing_alg_values_supported"]?.arrayValue?.compactMap(\.stringValue) ?? []
        sendsIssuerInResponses = document["authorization_response_iss_parameter_supported"]?.boolValue == true
    }

    /// Whether the provider says it may send unsigned ID tokens (`alg: none`).
    var signsWithNone: Bool { idTokenSigningAlgorithms.contains("none") }
}

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
