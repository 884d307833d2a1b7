import Foundation

/// Finds the issuer identifier an authorization server uses, so that `iss` in the redirect
/// (RFC 9207) and in ID tokens can be compared exactly.
enum IssuerDiscovery {
    /// What is known of the issuer of an authorization server.
    struct Issuer: Sendable, Equatable {
        /// The issuer identifier, compared exactly with `iss`.
        let identifier: String
        /// Whether the server says it puts `iss` into authorization responses (RFC 9207 §3): a response
        /// without it is then refused as possibly coming from another server (mix-up attack).
        let sendsIssuerInResponses: Bool
    }

    /// The expected issuer for an authorize endpoint, or `nil` when it cannot be known.
    ///
    /// Microsoft Entra tenants have a fixed form. Other servers are asked through OpenID Connect
    /// discovery next to the authorize endpoint (`…/authorize` → `…/.well-known/openid-configuration`);
    /// the answer counts only when it names the same authorize endpoint.
    static func issuer(forAuthorizeURL authorizeURL: URL, httpClient: any TransportClient) async -> Issuer? {
        if let entra = entraIssuer(authorizeURL) { return Issuer(identifier: entra, sendsIssuerInResponses: false) }
        var base = authorizeURL.absoluteString
        if let query = base.firstIndex(of: "?") { base = String(base[..<query]) }
        while base.hasSuffix("/") { base.removeLast() }
        guard let slash = base.lastIndex(of: "/") else { return nil }
        let root = String(base[..<slash])
        guard let discoveryURL = URL(string: root + "/.well-known/openid-configuration"),
              let response = try? await httpClient.send(.get(discoveryURL)),
              response.statusCode == 200,
              let document = try? JSONValue.parse(response.body),
              let issuer = document["issuer"]?.stringValue,
              let advertised = document["authorization_endpoint"]?.stringValue.flatMap(URL.init(string:)),
              URLNormalization.comparable(advertised) == URLNormalization.comparable(authorizeURL)
        else { return nil }
        return Issuer(identifier: issuer, sendsIssuerInResponses: document["authorization_response_iss_parameter_supported"]?.boolValue == true)
    }

    /// `https://login.microsoftonline.com/{tenant}/v2.0` for a tenant-specific Entra v2.0 endpoint.
    static func entraIssuer(_ authorizeURL: URL) -> String? {
        guard URLNormalization.host(of: authorizeURL) == "login.microsoftonline.com" else { return nil }
        let parts = authorizeURL.path.split(separator: "/")
        guard let tenant = parts.first, !["common", "organizations", "consumers"].contains(tenant.lowercased()) else { return nil }
        return "https://login.microsoftonline.com/\(tenant)/v2.0"
    }
}
