import Foundation
import Glibc
import PortalAuthStore
import PortalAuthTransport

/// What a response asks for, as `AuthenticationManager.data(for:)` reads it: the challenge to answer, or none.
enum DetectedChallenge: Sendable, Equatable {
    /// ArcGIS error 498 or 499 in the error document (usually inside HTTP 200).
    case arcGISToken(code: Int, message: String)
    /// An Identity-Aware Proxy wants a sign-in (see `detect(in:for:sentBearerToken:iapConfigurations:)` for the
    /// answers read as one).
    case identityAwareProxy(detail: String)
    /// HTTP authentication: the password schemes offered, in the server's order, with their realms.
    case http([Scheme])

    /// One password scheme a server offered.
    struct Scheme: Sendable, Equatable {
        let kind: NetworkAuthenticationChallenge.Kind
        let realm: String?
    }

    /// The challenge in `response` to a request for `url`, or nil when it is an ordinary answer.
    ///
    /// A proxy's sign-in request is recognised from any proxy, without a configuration for it:
    /// - a 401 or 403 with a `Bearer` challenge;
    /// - a redirect (3xx) whose `Location` is an OAuth 2.0 / OpenID Connect authorization request (its query has
    ///   `client_id` and `response_type`);
    /// - a 401 (with no password scheme offered) to a request that carried `Authorization: Bearer`.
    ///
    /// From a host that a known configuration covers, or to which a token agent's token for the proxy was sent (the
    /// agent's sign-in covers the host), also:
    /// - a 401 with no password scheme offered (mod_auth_openidc answers 401 without `WWW-Authenticate` to API
    ///   clients), and a 403 without one to a request that carried `Authorization: Bearer` (the proxy refused the
    ///   token it was given, as a 401 would say: one rule for a refused token, whichever of the two is used);
    /// - a redirect to the identity provider's host, to another path of the same host that is not below the
    ///   requested one (the proxy's own sign-in page), or to another host whose path names a sign-in (`login`,
    ///   `signin`, `sso`, `saml`, `oauth2`, …);
    /// - a 200 HTML page whose form posts itself to the identity provider's authorize endpoint (or carries
    ///   `client_id` and `response_type`).
    ///
    /// Ordinary redirects stay answers: http → https or a trailing slash on the same path, a path below the
    /// requested one (`/portal` → `/portal/home/`), a CDN on another host.
    ///
    /// - Parameters:
    ///   - sentBearerToken: whether the request carried `Authorization: Bearer`.
    ///   - iapConfigurations: the IAP configurations known (the stored credentials', those registered with the
    ///     manager, the `Authenticator`'s).
    ///   - sentAgentProxyToken: whether the request carried a token agent's token for the host's proxy.
    static func detect(
        in response: TransportResponse, for url: URL, sentBearerToken: Bool = false,
        iapConfigurations: @autoclosure () -> [IAPConfiguration], sentAgentProxyToken: Bool = false
    ) -> DetectedChallenge? {
        // Gathered only for an answer that could be a proxy's (most answers are a 200 that is not HTML).
        lazy var covering = iapConfigurations().filter { $0.canBeUsed(for: url) }
        lazy var behindProxy = sentAgentProxyToken || !covering.isEmpty
        if response.statusCode == 401 || response.statusCode == 403 {
            let offered = WWWAuthenticateChallenge.parse(response.headers.values(for: "WWW-Authenticate"))
            let schemes = offered.compactMap { challenge -> Scheme? in
                switch challenge.scheme {
                case "basic": return Scheme(kind: .basic, realm: challenge.realm)
                case "digest": return Scheme(kind: .digest, realm: challenge.realm)
                case "ntlm": return Scheme(kind: .ntlm, realm: nil)
                case "negotiate": return Scheme(kind: .negotiate, realm: nil)
                default: return nil
                }
            }
            if !schemes.isEmpty { return .http(schemes) }
            if let bearer = offered.first(where: { $0.scheme == "bearer" }) {
                let error = bearer.parameters["error"].map { ", error \($0)" } ?? ""
                return .identityAwareProxy(detail: "HTTP \(response.statusCode) with a Bearer challenge\(error)")
            }
            if response.statusCode == 401, behindProxy {
                return .identityAwareProxy(detail: "HTTP 401 from a host behind the proxy")
            }
            if response.statusCode == 403, sentBearerToken, behindProxy {
                return .identityAwareProxy(detail: "HTTP 403 from a host behind the proxy to a request with its token")
            }
            if response.statusCode == 401, sentBearerToken {
                return .identityAwareProxy(detail: "HTTP 401 to a request that carried a bearer token")
            }
        }
        if (300..<400).contains(response.statusCode), let location = response.headers["Location"],
            let target = URL(string: location, relativeTo: url)?.absoluteURL,
            let detail = signInRedirect(from: url, to: target, covering: covering)
        {
            return .identityAwareProxy(detail: detail)
        }
        if response.statusCode == 200, Self.isHTML(response), !covering.isEmpty,
            let provider = selfPostingSignInPage(response, covering: covering)
        {
            return .identityAwareProxy(detail: "a page that posts itself to the identity provider at \(provider)")
        }
        if let envelope = Self.envelope(of: response), let code = envelope.code, envelope.isTokenChallenge {
            let message = envelope.message ?? (code == 499 ? "Token Required" : "Invalid token")
            return .arcGISToken(code: code, message: message)
        }
        return nil
    }

    /// What makes `response` to a request for `url` look like an Identity-Aware Proxy's sign-in request that only a
    /// known IAP configuration makes a challenge of (a 401 without any challenge, a redirect to a sign-in page on
    /// another host, a page that posts itself to an authorization endpoint), or nil. For the notice `data(for:)`
    /// logs when no configuration is known at all.
    static func proxyLookingAnswer(_ response: TransportResponse, for url: URL) -> String? {
        if response.statusCode == 401, response.headers.values(for: "WWW-Authenticate").isEmpty {
            return "HTTP 401 without a WWW-Authenticate challenge"
        }
        if (300..<400).contains(response.statusCode), let location = response.headers["Location"],
            let target = URL(string: location, relativeTo: url)?.absoluteURL,
            let host = URLNormalization.host(of: target), host != URLNormalization.host(of: url),
            pathNamesSignIn(target.path(percentEncoded: true))
        {
            return "a redirect to a sign-in page at \(host)\(shortPath(target.path(percentEncoded: true)))"
        }
        if response.statusCode == 200, let provider = selfPostingSignInPage(response, covering: []) {
            return "a page that posts itself to a sign-in at \(provider)"
        }
        return nil
    }

    // MARK: - Redirects

    /// Why a redirect from `url` to `target` is a sign-in request, or nil when it is an ordinary one.
    static func signInRedirect(from url: URL, to target: URL, covering: [IAPConfiguration]) -> String? {
        guard let targetHost = URLNormalization.host(of: target) else { return nil }
        let targetPath = target.path(percentEncoded: true)
        if isAuthorizationRequest(target) {
            return "redirected to an authorization request at \(targetHost)\(shortPath(targetPath))"
        }
        guard !covering.isEmpty else { return nil }
        let providerHosts = covering.flatMap {
            [URLNormalization.host(of: $0.authorizeURL), URLNormalization.host(of: $0.tokenURL)]
        }
        if providerHosts.contains(targetHost) {
            return "redirected to the identity provider at \(targetHost)"
        }
        let requestPath = url.path(percentEncoded: true)
        if targetHost == URLNormalization.host(of: url) {
            // http → https, a trailing slash
            if trimmedSlashes(targetPath) == trimmedSlashes(requestPath) { return nil }
            if isBelow(targetPath, requestPath) { return nil }  // /portal → /portal/home/
            return "redirected from a host behind the proxy to its page \(shortPath(targetPath))"
        }
        if pathNamesSignIn(targetPath) {
            return "redirected from a host behind the proxy to a sign-in page at \(targetHost)\(shortPath(targetPath))"
        }
        return nil  // another host with an ordinary path: a CDN, a mirror
    }

    /// Whether `url` is an OAuth 2.0 authorization request: its query has `client_id` and `response_type`.
    static func isAuthorizationRequest(_ url: URL) -> Bool {
        let names = Set(
            (URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []).map { $0.name.lowercased() })
        return names.contains("client_id") && names.contains("response_type")
    }

    /// The path segments that name a sign-in page on another host.
    private static let signInWords = [
        "login", "logon", "signin", "sign-in", "sign_in", "sso", "saml", "saml2", "oauth", "oauth2", "authorize",
        "auth",
        "openid-connect", "adfs",
    ]

    private static func pathNamesSignIn(_ path: String) -> Bool {
        path.lowercased().split(separator: "/").contains { segment in
            let stem = segment.split(separator: ".").first.map(String.init) ?? String(segment)
            return signInWords.contains(stem)
        }
    }

    private static func trimmedSlashes(_ path: String) -> String {
        var path = path
        while path.hasSuffix("/") { path.removeLast() }
        return path
    }

    private static func isBelow(_ path: String, _ parent: String) -> Bool {
        let parent = trimmedSlashes(parent)
        return path.hasPrefix(parent + "/")
    }

    private static func shortPath(_ path: String) -> String {
        path.count > 80 ? String(path.prefix(80)) + "…" : path
    }

    // MARK: - Self-posting pages

    /// The identity provider's host when `response` is an HTML page whose form posts itself to the authorize
    /// endpoint of one of `covering` (or carries `client_id` and `response_type`), as mod_auth_openidc sends with
    /// `OIDCProviderAuthRequestMethod POST`; nil for any other answer.
    static func selfPostingSignInPage(_ response: TransportResponse, covering: [IAPConfiguration]) -> String? {
        guard isHTML(response), response.body.count <= 64 * 1024 else { return nil }
        let page = String(decoding: response.body, as: UTF8.self).lowercased()
        var searchFrom = page.startIndex
        while let open = page.range(of: "<form", range: searchFrom..<page.endIndex) {
            let tagEnd = page.range(of: ">", range: open.upperBound..<page.endIndex)?.lowerBound ?? page.endIndex
            let tag = String(page[open.upperBound..<tagEnd])
            let formEnd = page.range(of: "</form", range: tagEnd..<page.endIndex)?.lowerBound ?? page.endIndex
            let form = page[tagEnd..<formEnd]
            searchFrom = formEnd
            guard attribute("method", in: tag) == "post", let action = attribute("action", in: tag),
                let target = URL(string: action.replacingOccurrences(of: "&amp;", with: "&"), relativeTo: response.url)?
                    .absoluteURL,
                let host = URLNormalization.host(of: target)
            else { continue }
            let toAuthorize = covering.contains {
                URLNormalization.comparable($0.authorizeURL) == URLNormalization.comparable(target)
            }
            let carriesRequest =
                form.contains("name=\"client_id\"") && form.contains("name=\"response_type\"")
                || form.contains("name='client_id'") && form.contains("name='response_type'")
            if toAuthorize || carriesRequest { return host }
        }
        return nil
    }

    /// Whether the response is an HTML page.
    private static func isHTML(_ response: TransportResponse) -> Bool {
        let type = response.mediaType
        return type == "text/html" || type == "application/xhtml+xml"
    }

    /// The value of `name="…"` (or `'…'`, or unquoted) in a lower-cased tag.
    private static func attribute(_ name: String, in tag: String) -> String? {
        var searchFrom = tag.startIndex
        while let found = tag.range(of: name, range: searchFrom..<tag.endIndex) {
            searchFrom = found.upperBound
            // A whole attribute name: preceded by white space.
            guard found.lowerBound > tag.startIndex, tag[tag.index(before: found.lowerBound)].isWhitespace else {
                continue
            }
            var rest = tag[found.upperBound...].drop { $0.isWhitespace }
            guard rest.first == "=" else { continue }
            rest = rest.dropFirst().drop { $0.isWhitespace }
            if let quote = rest.first, quote == "\"" || quote == "'" {
                return String(rest.dropFirst().prefix { $0 != quote })
            }
            return String(rest.prefix { !$0.isWhitespace })
        }
        return nil
    }

    // MARK: - ArcGIS errors

    /// The ArcGIS error document of a small JSON (or JSON-looking) body.
    ///
    /// Only a body that could hold an `error` member is parsed: every answer to `data(for:)` passes here, and most
    /// are ordinary documents that parsing would only slow down. A member named `error` is spelled `"error"` in the
    /// body unless its name escapes a letter (`"\u0065rror"`), so a body with neither is no envelope.
    private static func envelope(of response: TransportResponse) -> ArcGISErrorEnvelope? {
        guard response.body.count < 64 * 1024, response.body.first(where: { !$0.isWhitespace }) == UInt8(ascii: "{"),
            mayHoldErrorMember(response.body)
        else { return nil }
        return ArcGISErrorEnvelope(body: response.body)
    }

    /// Whether `body` contains `"error"` or a `\u` escape: false means it has no member named `error`.
    static func mayHoldErrorMember(_ body: Data) -> Bool {
        body.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress else { return false }
            let name = "error\"".utf8
            /// Whether a `byte` is followed by `next` somewhere (memchr: this runs for every response).
            func found(_ byte: UInt8, followedBy next: (UnsafeRawBufferPointer.SubSequence) -> Bool) -> Bool {
                var offset = 0
                while offset < bytes.count, let hit = memchr(base + offset, Int32(byte), bytes.count - offset) {
                    offset = base.distance(to: UnsafeRawPointer(hit)) + 1
                    if next(bytes[offset...]) { return true }
                }
                return false
            }
            return found(UInt8(ascii: "\""), followedBy: { $0.starts(with: name) })
                || found(UInt8(ascii: "\\"), followedBy: { $0.first == UInt8(ascii: "u") })
        }
    }
}

extension UInt8 {
    /// Whether the byte is ASCII white space.
    fileprivate var isWhitespace: Bool { self == 0x20 || self == 0x09 || self == 0x0A || self == 0x0D }
}
