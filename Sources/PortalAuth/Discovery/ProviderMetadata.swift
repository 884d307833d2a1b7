import Foundation
import PortalAuthCore
import PortalAuthStore

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
