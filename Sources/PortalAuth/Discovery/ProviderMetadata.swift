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

/// Finds the endpoints an IAP sign-out uses in the OpenID provider's discovery document: the RFC 7009
/// `revocation_endpoint`, so that the refresh token is revoked too, and the `userinfo_endpoint`, where the sign-in's
/// access token shows whether the logout ended the session it belongs to.
///
/// Microsoft Entra ID publishes no revocation endpoint and is not asked.
enum RevocationEndpointDiscovery {
    /// The endpoints a sign-out uses; nil each when not advertised.
    struct Endpoints: Sendable, Equatable {
        var revocation: URL?
        var userInfo: URL?
    }

    /// The revocation and UserInfo endpoints advertised, read from one request; none when the document cannot be
    /// read or describes another authorize endpoint than `authorizeURL`.
    static func endpoints(forAuthorizeURL authorizeURL: URL, httpClient: any TransportClient) async -> Endpoints {
        guard URLNormalization.host(of: authorizeURL) != "login.microsoftonline.com",
              var components = URLComponents(url: authorizeURL, resolvingAgainstBaseURL: true)
        else { return Endpoints() }
        components.query = nil
        components.fragment = nil
        guard let bare = components.url,
              case let discoveryURL = bare.deletingLastPathComponent().appendingPathComponent(".well-known/openid-configuration"),
              let response = try? await httpClient.send(.get(discoveryURL)), response.statusCode == 200,
              let document = try? JSONValue.parse(response.body),
              let advertisedAuthorize = document["authorization_endpoint"]?.stringValue.flatMap(URL.init(string:)),
              URLNormalization.comparable(advertisedAuthorize) == URLNormalization.comparable(authorizeURL)
        else { return Endpoints() }
        func endpoint(_ key: String) -> URL? {
            guard let url = document[key]?.stringValue.flatMap(URL.init(string:)), url.host != nil else { return nil }
            return url
        }
        return Endpoints(revocation: endpoint("revocation_endpoint"), userInfo: endpoint("userinfo_endpoint"))
    }
}
