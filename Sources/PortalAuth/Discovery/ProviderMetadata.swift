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
/// The rule of every use of a discovery document, the sign-in's included: only the document of the sign-in's issuer
/// is read — fetched at that issuer's own address (OpenID Connect Discovery §4), naming exactly that `issuer` and the
/// sign-in's authorize endpoint — and only its https (or loopback http) endpoints are used. A document of another
/// issuer, wherever it is found, never receives the access token (UserInfo) nor the refresh token (revocation).
///
/// Microsoft Entra ID publishes no revocation endpoint, and its UserInfo (Microsoft Graph's) says nothing of a
/// logout: a logout leaves access tokens valid until they expire (MicrosoftDocs/entra-docs `v2-protocols-oidc.md`,
/// "Send a sign-out request"; `refresh-tokens.md`), and it accepts only Graph tokens (`userinfo.md`). Nothing is
/// fetched for it.
enum RevocationEndpointDiscovery {
    /// The endpoints a sign-out uses; nil each when not advertised.
    struct Endpoints: Sendable, Equatable {
        var revocation: URL?
        var userInfo: URL?
    }

    /// The revocation and UserInfo endpoints of `issuer`'s discovery document (the issuer the sign-in's ID token was
    /// checked against), when that document names `issuer` and `authorizeURL`; none otherwise, and none without a
    /// known issuer or for Microsoft Entra.
    static func endpoints(issuer: String?, authorizeURL: URL, httpClient: any TransportClient) async -> Endpoints {
        guard let issuer, !EntraAuthority.isEntraHost(authorizeURL),
            URL(string: issuer).map(EntraAuthority.isEntraHost) != true,
            let discoveryURL = IssuerDiscovery.discoveryURL(forIssuer: issuer),
            let document = await IssuerDiscovery.fetch(discoveryURL, httpClient: httpClient),
            document.object["issuer"]?.stringValue == issuer,
            let advertisedAuthorize = document.object["authorization_endpoint"]?.stringValue.flatMap(
                URL.init(string:)),
            URLNormalization.comparable(advertisedAuthorize) == URLNormalization.comparable(authorizeURL)
        else { return Endpoints() }
        return endpoints(in: document.object)
    }

    /// The endpoints a discovery document advertises: absolute https URLs, or http to a loopback host.
    private static func endpoints(in document: JSONObject) -> Endpoints {
        func endpoint(_ key: String) -> URL? {
            guard let text = document[key]?.stringValue, let url = URLRules.url(from: text), url.host != nil,
                URLRules.endpointProblem(url) == nil
            else { return nil }
            return url
        }
        return Endpoints(revocation: endpoint("revocation_endpoint"), userInfo: endpoint("userinfo_endpoint"))
    }
}
