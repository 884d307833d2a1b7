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
    /// `jwks_uri`: the keys ID tokens are signed with (nil when the document names none: ID tokens are then refused).
    let jwksURI: URL?
    /// `userinfo_endpoint`.
    let userinfoEndpoint: URL?
    /// `device_authorization_endpoint` (RFC 8628).
    let deviceAuthorizationEndpoint: URL?
    /// `id_token_signing_alg_values_supported` (empty when absent).
    let idTokenSigningAlgorithms: [String]
    /// `authorization_response_iss_parameter_supported` (RFC 9207 §3).
    let sendsIssuerInResponses: Bool

    /// The metadata of `document`, fetched from `documentURL`.
    ///
    /// - Throws: `DiscoveryError` when `jwks_uri` is present but cannot be used (not a string, not an absolute URL,
    ///   plain http to a host that is not loopback, credentials in it): that is no "no key set", which would leave
    ///   ID tokens unchecked.
    init(issuer: String, document: JSONObject, at documentURL: URL) throws(DiscoveryError) {
        func endpoint(_ key: String) -> URL? {
            guard let text = document[key]?.stringValue, let url = URLRules.url(from: text),
                URLRules.endpointProblem(url) == nil
            else { return nil }
            return url
        }
        self.issuer = issuer
        tokenEndpoint = endpoint("token_endpoint")
        jwksURI = try Self.keySetAddress(document["jwks_uri"], in: documentURL)
        userinfoEndpoint = endpoint("userinfo_endpoint")
        deviceAuthorizationEndpoint = endpoint("device_authorization_endpoint")
        idTokenSigningAlgorithms =
            document["id_token_signing_alg_values_supported"]?.arrayValue?.compactMap(\.stringValue) ?? []
        sendsIssuerInResponses = document["authorization_response_iss_parameter_supported"]?.boolValue == true
    }

    /// `jwks_uri` as a URL the keys may be fetched from: nil when absent, else an absolute https URL (http only to a
    /// loopback host) without a user name or password.
    static func keySetAddress(_ value: JSONValue?, in documentURL: URL) throws(DiscoveryError) -> URL? {
        guard let value else { return nil }
        guard let text = value.stringValue else {
            throw .unusableKeySet(
                document: documentURL, value: value.serialized(indent: 0), problem: "it is not a string")
        }
        guard let url = URLRules.url(from: text), url.scheme != nil, url.host != nil else {
            throw .unusableKeySet(
                document: documentURL, value: "\"\(text)\"",
                problem: "it is not an absolute URL (a relative path is not allowed)")
        }
        if let problem = URLRules.endpointProblem(url) {
            // A URL with a user name or password is shown without them.
            let shown =
                url.user == nil && url.password == nil
                ? "\"\(text)\"" : "\(RedactedURL(url)) (user information left out)"
            throw .unusableKeySet(document: documentURL, value: shown, problem: problem)
        }
        return url
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

    /// The revocation and UserInfo endpoints advertised, read from the first discovery document found where the
    /// sign-in looks for its issuer's (the authorize URL's folder and each folder above it: LemonLDAP::NG publishes it
    /// at its origin, beside `/oauth2/authorize`) that describes `authorizeURL`; none when no such document is read.
    static func endpoints(forAuthorizeURL authorizeURL: URL, httpClient: any TransportClient) async -> Endpoints {
        guard URLNormalization.host(of: authorizeURL) != "login.microsoftonline.com" else { return Endpoints() }
        for candidate in IssuerDiscovery.candidateIssuers(authorizeURL) {
            guard let discoveryURL = IssuerDiscovery.discoveryURL(forIssuer: candidate),
                let response = try? await httpClient.send(.get(discoveryURL)), response.statusCode == 200,
                let document = try? JSONValue.parse(response.body),
                let advertisedAuthorize = document["authorization_endpoint"]?.stringValue.flatMap(URL.init(string:)),
                URLNormalization.comparable(advertisedAuthorize) == URLNormalization.comparable(authorizeURL)
            else { continue }
            return endpoints(in: document)
        }
        return Endpoints()
    }

    /// The endpoints a discovery document advertises (absolute URLs only).
    private static func endpoints(in document: JSONValue) -> Endpoints {
        func endpoint(_ key: String) -> URL? {
            guard let url = document[key]?.stringValue.flatMap(URL.init(string:)), url.host != nil else { return nil }
            return url
        }
        return Endpoints(revocation: endpoint("revocation_endpoint"), userInfo: endpoint("userinfo_endpoint"))
    }
}
