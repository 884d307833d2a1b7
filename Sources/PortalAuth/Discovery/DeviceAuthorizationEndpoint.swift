import Foundation

/// Finds an identity provider's device authorization endpoint (RFC 8628 §4).
///
/// In order: the one given explicitly; for Microsoft Entra, `…/oauth2/v2.0/devicecode` beside the configuration's
/// `…/oauth2/v2.0/authorize`; else `device_authorization_endpoint` of the OpenID Connect discovery document next to
/// the authorize endpoint, counted only when that document names the same authorize endpoint.
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

    /// The discovery document's `device_authorization_endpoint`, when it is a usable endpoint.
    static func discovered(authorizeURL: URL, httpClient: any TransportClient) async -> URL? {
        var base = authorizeURL.absoluteString
        if let query = base.firstIndex(of: "?") { base = String(base[..<query]) }
        while base.hasSuffix("/") { base.removeLast() }
        guard let slash = base.lastIndex(of: "/") else { return nil }
        guard let discoveryURL = URL(string: String(base[..<slash]) + "/.well-known/openid-configuration"),
              let response = try? await httpClient.send(.get(discoveryURL)), response.statusCode == 200,
              let document = try? JSONValue.parse(response.body),
              let advertised = document["authorization_endpoint"]?.stringValue.flatMap(URL.init(string:)),
              URLNormalization.comparable(advertised) == URLNormalization.comparable(authorizeURL),
              let text = document["device_authorization_endpoint"]?.stringValue,
              let endpoint = URLRules.url(from: text), URLRules.endpointProblem(endpoint) == nil
        else { return nil }
        return endpoint
    }
}
