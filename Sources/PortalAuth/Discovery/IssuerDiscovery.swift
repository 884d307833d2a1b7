import Foundation
import PortalAuthCore
import PortalAuthTransport

/// Finds the issuer identifier an authorization server uses, so that `iss` in the redirect (RFC 9207) and in ID
/// tokens can be compared exactly, and the provider's verified OpenID Connect discovery document (its keys, UserInfo
/// endpoint, token endpoint).
///
/// The expected issuer comes only from sources an attacker who answers at the configured URLs cannot choose
/// (RFC 9700 §4.4, mix-up): an issuer given in the configuration, the issuer a fixed table knows for the provider
/// (Microsoft Entra), or a discovery document whose `issuer` is the very URL it was fetched for (OpenID Connect
/// Discovery §4.3) and whose `authorization_endpoint` is the configured authorize URL. A document that names the
/// configured authorize endpoint but another issuer stops the sign-in before the browser opens.
enum IssuerDiscovery {
    /// What is known of the issuer of an authorization server.
    struct Issuer: Sendable, Equatable {
        /// The issuer identifier, compared exactly with `iss` (for Entra's template, see `expectedIssuer(of:)`).
        var identifier: String
        /// Whether the server says it puts `iss` into authorization responses (RFC 9207 §3): a response
        /// without it is then refused as possibly coming from another server (mix-up attack).
        let sendsIssuerInResponses: Bool
        /// The verified discovery document, when one was found.
        var metadata: ProviderMetadata? = nil
        /// The Microsoft Entra authority the issuer was found for (its document is the authority's v2.0 one).
        var entra: EntraAuthority? = nil
        /// Whether the configuration's issuer chose the Entra tenant (`organizations`/`common` pinned to one).
        var isPinned = false

        /// Whether `identifier` is Entra's issuer template (`organizations`, `common`): `iss` is then compared with
        /// the template with the token's `tid` substituted (`expectedIssuer(of:)`), never with the template itself.
        var isTemplate: Bool { entra.map { identifier == $0.issuerTemplate } ?? false }

        /// The issuer `iss` must equal, when it is known before any token arrives (nil for a template).
        var exactIdentifier: String? { isTemplate ? nil : identifier }

        /// The issuer `token`'s `iss` must equal: `identifier`, or for Entra's template the template with the
        /// token's `tid` substituted, as Microsoft.IdentityModel's AadIssuerValidator and MSAL do (MicrosoftDocs/
        /// entra-docs `v2-protocols-oidc.md`: "the issuer value … is a template … substitute the tenant ID").
        ///
        /// - Throws: `IDTokenError` when the template cannot be filled in: no `tid`, a `tid` that is no directory
        ///   ID (it would make another issuer), or a personal Microsoft account through `common` (see
        ///   `EntraAuthority.unusableReason`).
        func expectedIssuer(of token: IDToken) throws(IDTokenError) -> String {
            guard isTemplate, let entra else { return identifier }
            guard let tenantID = token.tenantID, EntraAuthority.isTenantID(tenantID) else {
                let shown = token.tenantID.map { "tid \(DisplayText.neutralised($0, limit: 60))" } ?? "no tid"
                throw .claimMismatch(
                    "tid",
                    "the token has \(shown), not a directory ID, so the issuer template \(identifier) of the "
                        + "\(entra.segment) authority cannot be filled in to check iss")
            }
            if tenantID.lowercased() == EntraAuthority.consumerTenantID {
                throw .claimMismatch(
                    "tid",
                    "a personal Microsoft account signed in (tid \(tenantID)) through common: "
                        + EntraAuthority.personalAccountsReason(host: entra.host))
            }
            return entra.issuer(tenantID: tenantID)
        }
    }

    /// The most path levels walked up from the authorize URL (each one GET).
    static let maximumLevels = 6

    /// The expected issuer for an authorize endpoint, or `nil` when it cannot be known.
    ///
    /// For a Microsoft Entra authority, its v2.0 document only (`entraIssuer`); else in order: `explicit` (its
    /// discovery document, when it has one, must agree); the discovery documents at the authorize URL's folder and
    /// each folder above it, the first that names the same authorize endpoint.
    ///
    /// - Throws: `DiscoveryError` when a document describes the configured authorize endpoint but names another
    ///   issuer than the URL it was fetched for, disagrees with `explicit`, or names a `jwks_uri` that cannot be
    ///   used: nothing may be sent to that provider then.
    static func issuer(
        forAuthorizeURL authorizeURL: URL, explicit: URL? = nil, httpClient: any TransportClient
    ) async throws(DiscoveryError) -> Issuer? {
        if let entra = EntraAuthority(endpoint: authorizeURL) {
            return try await entraIssuer(entra, explicit: explicit, authorizeURL: authorizeURL, httpClient: httpClient)
        }
        if let explicit {
            let identifier = explicit.absoluteString
            guard let document = await fetch(discoveryURL(forIssuer: identifier), httpClient: httpClient) else {
                return Issuer(identifier: identifier, sendsIssuerInResponses: false)
            }
            let metadata = try verify(document, fetchedFor: identifier, authorizeURL: authorizeURL, required: true)
            return metadata.map {
                Issuer(identifier: $0.issuer, sendsIssuerInResponses: $0.sendsIssuerInResponses, metadata: $0)
            }
        }
        for candidate in candidateIssuers(authorizeURL) {
            guard let document = await fetch(discoveryURL(forIssuer: candidate), httpClient: httpClient) else {
                continue
            }
            if let metadata = try verify(document, fetchedFor: candidate, authorizeURL: authorizeURL, required: false) {
                return Issuer(
                    identifier: metadata.issuer, sendsIssuerInResponses: metadata.sendsIssuerInResponses,
                    metadata: metadata)
            }
        }
        return nil
    }

    /// The issuers a discovery document may be kept for, from the authorize URL's folder up to its origin:
    /// `https://h/a/b/authorize` → `https://h/a/b`, `https://h/a`, `https://h`.
    static func candidateIssuers(_ authorizeURL: URL) -> [String] {
        guard var components = URLComponents(url: authorizeURL, resolvingAgainstBaseURL: false), components.host != nil
        else { return [] }
        components.query = nil
        components.fragment = nil
        components.user = nil
        components.password = nil
        var parts = components.percentEncodedPath.split(separator: "/", omittingEmptySubsequences: true).map(
            String.init)
        if !parts.isEmpty { parts.removeLast() }
        var candidates: [String] = []
        while candidates.count < maximumLevels {
            components.percentEncodedPath = parts.isEmpty ? "" : "/" + parts.joined(separator: "/")
            guard let text = components.url?.absoluteString else { break }
            candidates.append(text)
            if parts.isEmpty { break }
            parts.removeLast()
        }
        return candidates
    }

    /// Where the discovery document of `issuer` is (OpenID Connect Discovery §4: a terminating `/` removed, then
    /// `/.well-known/openid-configuration` appended).
    static func discoveryURL(forIssuer issuer: String) -> URL? {
        var base = issuer
        while base.hasSuffix("/") { base.removeLast() }
        return URL(string: base + "/.well-known/openid-configuration")
    }

    /// The JSON object at `url`, or nil when there is none (not found, unreachable, not a JSON object).
    static func fetch(_ url: URL?, httpClient: any TransportClient) async -> (url: URL, object: JSONObject)? {
        guard let url, let response = try? await httpClient.send(.get(url)), response.statusCode == 200,
            let object = try? JSONValue.parse(response.body).objectValue
        else { return nil }
        return (url, object)
    }

    /// The document as metadata when it describes the configured authorize endpoint and the issuer it was fetched
    /// for; nil when it describes another authorize endpoint (and `required` is false).
    private static func verify(
        _ document: (url: URL, object: JSONObject), fetchedFor expected: String, authorizeURL: URL, required: Bool
    ) throws(DiscoveryError) -> ProviderMetadata? {
        let object = document.object
        let advertised = object["authorization_endpoint"]?.stringValue.flatMap(URL.init(string:))
        guard let advertised, URLNormalization.comparable(advertised) == URLNormalization.comparable(authorizeURL)
        else {
            if required {
                throw .authorizeEndpointMismatch(
                    document: document.url, advertised: object["authorization_endpoint"]?.stringValue,
                    configured: authorizeURL)
            }
            return nil
        }
        guard let issuer = object["issuer"]?.stringValue, let issuerURL = URL(string: issuer), issuerURL.host != nil,
            issuerURL.query == nil, issuerURL.fragment == nil,
            let location = discoveryURL(forIssuer: issuer),
            URLNormalization.comparable(location) == URLNormalization.comparable(document.url)
        else {
            throw .issuerMismatch(document: document.url, claimed: object["issuer"]?.stringValue, expected: expected)
        }
        return try ProviderMetadata(issuer: issuer, document: object, at: document.url)
    }

    /// A warning when the configured token endpoint is not the one the verified discovery document names (a proxy
    /// or gateway in front of it, or a configuration that mixes two providers): the code goes to the configured one.
    static func tokenEndpointWarning(_ issuer: Issuer?, tokenURL: URL) -> String? {
        guard let advertised = issuer?.metadata?.tokenEndpoint,
            URLNormalization.comparable(advertised) != URLNormalization.comparable(tokenURL)
        else { return nil }
        // An Entra authority named by a domain: its document names the same endpoint with the tenant's ID.
        if let entra = issuer?.entra, let tenantID = entra.tenantID(inIssuer: issuer?.identifier ?? ""),
            let configured = EntraAuthority(endpoint: tokenURL), configured.host == entra.host,
            configured.segment.lowercased() == entra.segment.lowercased(),
            URLNormalization.comparable(advertised)
                == URLNormalization.comparable(entra.endpoint("token", tenantID: tenantID))
        {
            return nil
        }
        return
            "the token_url \(RedactedURL(tokenURL)) is not the token_endpoint \(RedactedURL(advertised)) that the issuer "
            + "\(issuer?.identifier ?? "?")'s discovery document names; the sign-in's code and PKCE verifier go to the token_url: "
            + "check that it belongs to this identity provider"
    }

    /// Whether `issuer` is a URL of the same origin (scheme, host, port) as `url`: with no issuer known, an `iss` of
    /// another origin than the authorize endpoint is refused (it names another provider: mix-up).
    static func isSameOrigin(_ issuer: String, as url: URL) -> Bool {
        guard let issuerURL = URL(string: issuer), let host = URLNormalization.host(of: issuerURL) else { return false }
        return issuerURL.scheme?.lowercased() == url.scheme?.lowercased() && host == URLNormalization.host(of: url)
            && URLNormalization.effectivePort(of: issuerURL) == URLNormalization.effectivePort(of: url)
    }
}
