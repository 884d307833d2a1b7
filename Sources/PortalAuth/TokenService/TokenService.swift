import Foundation
import PortalAuthCore
import PortalAuthStore
import PortalAuthTransport

/// Where a portal or server generates tokens for a username and password, and which URLs those tokens are for.
///
/// - A URL with a `sharing` segment (`https://h/portal/sharing/rest/…`) is a portal: its token service is
///   `{portal}/sharing/rest/generateToken`.
/// - A URL with a `rest` segment (`https://h/server/rest/services/…`) is an ArcGIS Server: its token service is
///   named by `{root}/rest/info?f=json` → `authInfo.tokenServicesUrl` (`…/generateToken` is appended when the
///   URL names the `tokens/` folder, as standalone servers do).
/// - Any other URL (`https://h/portal`, `https://h/portal/home`, `https://www.arcgis.com`) is taken as a portal,
///   as the ArcGIS Maps SDK takes the URL it is given.
struct TokenService: Sendable, Equatable {
    /// The `generateToken` endpoint.
    let generateTokenURL: URL
    /// The portal or server root the tokens are for (`canBeUsed(for:)` compares against it).
    let root: URL

    /// Finds the token service for `url`, reading `rest/info` for a server.
    ///
    /// - Throws: `TokenServiceError` (`invalidURL`, `discoveryFailed`, `notTokenSecured`), `TransportError`.
    static func discover(for url: URL, httpClient: any TransportClient) async throws -> TokenService {
        if let problem = URLRules.endpointProblem(url) {
            throw TokenServiceError(.invalidURL, url: RedactedURL(url), detail: "the URL \(problem)")
        }
        let (root, isServer) = Self.root(of: url)
        if isServer {
            return TokenService(generateTokenURL: try await fromInfo(of: root, httpClient: httpClient), root: root)
        }
        return TokenService(generateTokenURL: root.appending(path: "sharing/rest/generateToken"), root: root)
    }

    /// The portal or server root of `url` (no query), and whether it is a server (its path has a `rest` segment
    /// before any `sharing` segment).
    static func root(of url: URL) -> (root: URL, isServer: Bool) {
        let segments = url.path(percentEncoded: true).split(separator: "/", omittingEmptySubsequences: true)
        let lowered = segments.map { $0.lowercased() }
        let sharing = lowered.firstIndex(of: "sharing")
        if let rest = lowered.firstIndex(of: "rest"), rest < (sharing ?? .max) {
            return (Self.url(url, keeping: segments[..<rest]), true)
        }
        var end = sharing ?? segments.endIndex
        if sharing == nil, lowered.last == "home" { end -= 1 }  // a pasted portal home page address
        return (Self.url(url, keeping: segments[..<end]), false)
    }

    // MARK: - Server discovery

    /// The token service named by `{root}/rest/info?f=json`.
    private static func fromInfo(of root: URL, httpClient: any TransportClient) async throws -> URL {
        var components = URLComponents(url: root.appending(path: "rest/info"), resolvingAgainstBaseURL: true)!
        components.queryItems = [URLQueryItem(name: "f", value: "json")]
        let infoURL = components.url!
        let response = try await httpClient.send(.get(infoURL))
        func failure(_ detail: String) -> TokenServiceError {
            TokenServiceError(.discoveryFailed, url: RedactedURL(infoURL), detail: detail)
        }
        guard response.isSuccess else { throw failure("HTTP \(response.statusCode)") }
        guard let json = try? JSONValue.parse(response.body), json.objectValue != nil else {
            throw failure("the answer is not a JSON object")
        }
        if let envelope = ArcGISErrorEnvelope(json: json) {
            throw failure(
                "ArcGIS error \(envelope.code.map(String.init) ?? "?")" + (envelope.message.map { " \($0)" } ?? ""))
        }
        guard let authInfo = json["authInfo"]?.objectValue else { throw failure("no authInfo in the answer") }
        if authInfo["isTokenBasedSecurity"]?.boolValue == false {
            throw TokenServiceError(
                .notTokenSecured, url: RedactedURL(root), detail: "rest/info says isTokenBasedSecurity is false")
        }
        guard let text = authInfo["tokenServicesUrl"]?.stringValue, !text.isEmpty else {
            throw TokenServiceError(
                .notTokenSecured, url: RedactedURL(root), detail: "rest/info names no tokenServicesUrl")
        }
        guard var service = URL(string: text, relativeTo: infoURL)?.absoluteURL else {
            throw failure("tokenServicesUrl is not a URL")
        }
        if let problem = URLRules.endpointProblem(service) {
            throw failure("tokenServicesUrl \(problem)")
        }
        if service.lastPathComponent.lowercased() != "generatetoken" {
            service = service.appending(path: "generateToken")
        }
        return service
    }

    /// `url` with only the given path segments, no query or fragment.
    private static func url(_ url: URL, keeping segments: ArraySlice<Substring>) -> URL {
        var components = URLComponents(url: url, resolvingAgainstBaseURL: true)!
        components.query = nil
        components.fragment = nil
        components.percentEncodedPath = segments.isEmpty ? "" : "/" + segments.joined(separator: "/")
        return components.url ?? url
    }
}
