public import Foundation
import PortalAuthTransport
import Synchronization

/// The registration of an application with an ArcGIS portal (ArcGIS Online or ArcGIS Enterprise) for
/// signing users in with OAuth 2.0 (authorization code with PKCE, public client).
///
/// Creating a configuration never fails, as in the ArcGIS Maps SDK; call ``validate()`` to learn whether
/// it can be used. The portal's OAuth endpoints derive from ``portalURL``.
public struct OAuthUserConfiguration: Sendable, Hashable {
    // MARK: - Defaults and limits

    /// The default redirect URL: a loopback URL, to which any port is added at sign-in.
    public static let defaultRedirectURL = URL(string: "http://127.0.0.1/callback")!
    /// The default refresh-token lifetime asked of the portal: two weeks, the portal's own default.
    public static let defaultRefreshTokenExpirationInterval: Duration = .seconds(14 * 24 * 3600)
    /// The default age at which a refresh token is exchanged for a new one: 24 hours.
    public static let defaultRefreshTokenExchangeInterval: Duration = .seconds(24 * 3600)
    /// The longest refresh-token lifetime a portal grants: 90 days.
    public static let maximumRefreshTokenInterval: Duration = .seconds(90 * 24 * 3600)

    // MARK: - Properties

    /// The portal, e.g. `https://www.arcgis.com` or `https://gis.example.com/portal`.
    public let portalURL: URL
    /// The client ID of the application registered in the portal. Not a secret.
    public let clientID: String
    /// The redirect URL registered for the application; a loopback URL for signing in on this platform.
    public let redirectURL: URL
    /// How long the refresh token should live (sent to the portal as `expiration`, in minutes).
    public let refreshTokenExpirationInterval: Duration
    /// How old a refresh token may get before it is exchanged for a new one.
    public let refreshTokenExchangeInterval: Duration

    /// Creates a configuration. It is not checked here; call ``validate()``.
    ///
    /// - Parameters:
    ///   - portalURL: The portal URL, with or without a trailing slash.
    ///   - clientID: The application's client ID.
    ///   - redirectURL: The registered redirect URL; `http://127.0.0.1/callback` by default.
    ///   - refreshTokenExpirationInterval: The refresh-token lifetime to ask for; two weeks by default, at most 90 days.
    ///   - refreshTokenExchangeInterval: The age at which to exchange the refresh token; 24 hours by default.
    public init(
        portalURL: URL,
        clientID: String,
        redirectURL: URL = OAuthUserConfiguration.defaultRedirectURL,
        refreshTokenExpirationInterval: Duration = OAuthUserConfiguration.defaultRefreshTokenExpirationInterval,
        refreshTokenExchangeInterval: Duration = OAuthUserConfiguration.defaultRefreshTokenExchangeInterval
    ) {
        self.portalURL = portalURL
        self.clientID = clientID
        self.redirectURL = redirectURL
        self.refreshTokenExpirationInterval = refreshTokenExpirationInterval
        self.refreshTokenExchangeInterval = refreshTokenExchangeInterval
    }

    // MARK: - Endpoints

    /// `{portal}/sharing/rest/oauth2/authorize`.
    public var authorizeURL: URL { endpoint("authorize") }
    /// `{portal}/sharing/rest/oauth2/token`.
    public var tokenURL: URL { endpoint("token") }
    /// `{portal}/sharing/rest/oauth2/revokeToken`.
    public var revokeURL: URL { endpoint("revokeToken") }

    /// The refresh-token lifetime in whole minutes, as the portal's `expiration` parameter takes it.
    public var refreshTokenExpirationMinutes: Int {
        Int(refreshTokenExpirationInterval.components.seconds / 60)
    }

    /// Whether the redirect URL can receive the sign-in redirect on this machine (`http` on a loopback host).
    public var isLoopbackRedirect: Bool {
        URLRules.isLoopbackRedirect(redirectURL)
    }

    /// Whether the redirect URL has an application's own scheme (`my-maps-app://auth`), received on a desktop
    /// through the scheme's handler (see ``SchemeRegistration``).
    public var isCustomSchemeRedirect: Bool {
        CustomSchemeRedirect(redirectURL) != nil
    }

    /// The portal URL as ``normalizedPortalURL(_:)`` writes it: the root the OAuth endpoints hang from.
    var portalRoot: URL { Self.normalizedPortalURL(portalURL) }

    /// A portal address as people paste it, written as the portal URL ArcGIS clients take: scheme and host in lower
    /// case, the default port, query, fragment and trailing slashes dropped, and a trailing `/sharing/rest`,
    /// `/sharing`, `/home` or page under `/home` (`/home/index.html`, `/home/item.html`) removed —
    /// `https://GIS.example.com/arcgis/sharing/rest/` becomes `https://gis.example.com/arcgis`. Stored sign-ins are
    /// keyed and looked up by it, so a sign-in made with any of these forms (also by an older version, which kept
    /// the form as typed) is found with any other.
    package static func normalizedPortalURL(_ url: URL) -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return url }
        components.query = nil
        components.fragment = nil
        components.percentEncodedPath =
            "/" + Self.rootSegments(of: components.percentEncodedPath).joined(separator: "/")
        if components.percentEncodedPath == "/" { components.percentEncodedPath = "" }
        guard let root = components.url else { return url }
        return URL(string: URLNormalization.comparable(root)) ?? root
    }

    private func endpoint(_ name: String) -> URL {
        portalRoot.appending(path: "sharing/rest/oauth2/\(name)")
    }

    /// The path segments of a portal path, without the suffixes `normalizedPortalURL(_:)` drops.
    private static func rootSegments(of path: String) -> [Substring] {
        rootSegments(of: path.split(separator: "/"))
    }

    /// `segments` without the suffixes `normalizedPortalURL(_:)` drops.
    private static func rootSegments<Segment: StringProtocol>(of segments: [Segment]) -> [Segment] {
        var segments = segments
        // A page of the portal's web site (`home/index.html`, `home/item.html`): the portal is above `home`.
        if segments.count >= 2, segments[segments.count - 2].lowercased() == "home",
            segments[segments.count - 1].lowercased().hasSuffix(".html")
        {
            return Array(segments.dropLast(2))
        }
        for suffix in [["sharing", "rest"], ["sharing"], ["home"]] {
            let tail = segments.suffix(suffix.count).map { $0.lowercased() }
            if tail == suffix {
                segments.removeLast(suffix.count)
                break
            }
        }
        return segments
    }

    // MARK: - Matching URLs

    /// Whether this configuration applies to `url`.
    ///
    /// True when `url` has the portal's scheme and host (case-insensitive, a trailing dot ignored), the same
    /// port (80 and 443 filled in for http and https), and a path inside the portal's path on segment
    /// boundaries (case-insensitive): `https://h/portal` covers `https://h/portal` and
    /// `https://h/portal/sharing/rest/…`, not `https://h/portal2`. Paths are compared percent-decoded with dot
    /// segments removed, and a path that servers may read otherwise (`/portal/%2e%2e/other`, an encoded `/`, a
    /// backslash) is covered by nothing. For an ArcGIS Online portal (`arcgis.com`
    /// or a subdomain) every `https` URL on `arcgis.com` or a subdomain qualifies.
    public func canBeUsed(for url: URL) -> Bool {
        Self.url(url, isWithin: portalURL)
    }

    /// Whether `url` belongs to the portal or server at `portalURL` by the rules of ``canBeUsed(for:)``: also used
    /// by the credentials that are not made from a configuration (tokens, application credentials).
    package static func url(_ url: URL, isWithin portalURL: URL) -> Bool {
        guard let scheme = url.scheme?.lowercased(), let host = URLNormalization.host(of: url),
            let portal = PortalScope.of(portalURL)
        else { return false }
        if Self.isArcGISOnline(portal.host), scheme == "https", Self.isArcGISOnline(host) { return true }
        guard scheme == portal.scheme, host == portal.host, URLNormalization.effectivePort(of: url) == portal.port,
            let path = URLNormalization.pathSegments(url.path(percentEncoded: true)), let portalPath = portal.path
        else { return false }
        return path.count >= portalPath.count && zip(path, portalPath).allSatisfy { $0.lowercased() == $1 }
    }

    /// What `url(_:isWithin:)` compares of a portal URL, worked out once per URL: every request an app sends
    /// through the manager is checked against its credentials' portals.
    private struct PortalScope: Sendable {
        let scheme: String
        let host: String
        let port: Int?
        /// The portal's root path segments, lower-cased; nil when its path is ambiguous (covers nothing).
        let path: [String]?

        /// The most portal URLs remembered; past it the memory starts again (an app knows a few portals).
        static let capacity = 64
        private static let known = Mutex<[String: PortalScope?]>([:])

        /// The scope of `portalURL`, nil when it has no scheme or host.
        static func of(_ portalURL: URL) -> PortalScope? {
            // Keyed without query or fragment, which the scope does not depend on (and which are not kept).
            let text = portalURL.absoluteString.utf8
            let key = String(Substring(text.prefix { $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }))
            if let remembered = known.withLock({ $0[key] }) { return remembered }
            var scope: PortalScope?
            if let scheme = portalURL.scheme?.lowercased(), let host = URLNormalization.host(of: portalURL) {
                let segments = URLNormalization.pathSegments(portalURL.path(percentEncoded: true))
                scope = PortalScope(
                    scheme: scheme, host: host, port: URLNormalization.effectivePort(of: portalURL),
                    path: segments.map { OAuthUserConfiguration.rootSegments(of: $0).map { $0.lowercased() } })
            }
            known.withLock { known in
                if known.count >= capacity { known.removeAll() }
                known[key] = .some(scope)
            }
            return scope
        }
    }

    /// Whether `host` is `arcgis.com` or one of its subdomains.
    static func isArcGISOnline(_ host: String) -> Bool {
        host == "arcgis.com" || host.hasSuffix(".arcgis.com")
    }

    // MARK: - Validation

    /// Checks the configuration and reports every problem at once.
    ///
    /// The portal and redirect URLs must be absolute `http`/`https` URLs with a host, `https` unless the host
    /// is loopback (the redirect URL may also have a custom scheme such as `my-maps-app://auth`); the client ID must not be empty; the refresh-token lifetime must be from 1 minute to
    /// 90 days, and the exchange interval more than zero and shorter than that lifetime.
    ///
    /// - Throws: ``ConfigurationError`` of kind ``ConfigurationError/Kind/invalidConfiguration`` whose issues
    ///   are named by property (`portalURL`, `clientID`, …).
    public func validate() throws(ConfigurationError) {
        var issues: [ConfigurationIssue] = []
        func add(_ problem: String?, _ key: String) {
            if let problem { issues.append(ConfigurationIssue(message: "`\(key)` \(problem)", key: key)) }
        }
        add(URLRules.endpointProblem(portalURL), "portalURL")
        add(isCustomSchemeRedirect ? nil : URLRules.endpointProblem(redirectURL), "redirectURL")
        add(
            clientID.allSatisfy(\.isWhitespace)
                ? "must not be empty; use the client ID of the application registered in the portal" : nil, "clientID")
        let maximum = Self.maximumRefreshTokenInterval
        let expirationIsValid =
            refreshTokenExpirationInterval >= .seconds(60) && refreshTokenExpirationInterval <= maximum
        if !expirationIsValid {
            add(
                "must be from 1 minute to 90 days, found \(Self.describe(refreshTokenExpirationInterval))",
                "refreshTokenExpirationInterval")
        }
        if refreshTokenExchangeInterval <= .zero || refreshTokenExchangeInterval > maximum {
            add(
                "must be more than zero and at most 90 days, found \(Self.describe(refreshTokenExchangeInterval))",
                "refreshTokenExchangeInterval")
        } else if expirationIsValid, refreshTokenExchangeInterval >= refreshTokenExpirationInterval {
            add(
                "(\(Self.describe(refreshTokenExchangeInterval))) must be shorter than refreshTokenExpirationInterval (\(Self.describe(refreshTokenExpirationInterval))), or the refresh token expires before it is exchanged",
                "refreshTokenExchangeInterval")
        }
        if !issues.isEmpty { throw .invalid(nil, issues: issues) }
    }

    /// A duration in the largest whole unit that fits: `14 days`, `36 hours`, `90 seconds`.
    package static func describe(_ duration: Duration) -> String {
        let seconds = duration.components.seconds
        for (unit, size) in [("day", Int64(86400)), ("hour", 3600), ("minute", 60)]
        where seconds != 0 && seconds % size == 0 {
            let count = seconds / size
            return "\(count) \(unit)\(abs(count) == 1 ? "" : "s")"
        }
        if duration.components.attoseconds != 0 { return "\(duration)" }
        return "\(seconds) second\(abs(seconds) == 1 ? "" : "s")"
    }
}
