package import Foundation
import PortalAuthCore

/// How `CurlHTTPClient` talks to servers. Every setting has a safe default.
///
/// Proxies come from the environment, read by libcurl itself: `http_proxy`, `https_proxy` (or `HTTPS_PROXY`),
/// `all_proxy`/`ALL_PROXY` and `no_proxy`/`NO_PROXY`. libcurl ignores upper-case `HTTP_PROXY` on purpose
/// (httpoxy). The client never sets `CURLOPT_PROXY` or `CURLOPT_NOPROXY` for other hosts, so these variables
/// keep working; only loopback hosts always go direct, because a proxy's loopback is not this machine's.
package struct TransportConfiguration: Sendable {
    /// Connection and whole-request time limits.
    public struct Timeouts: Sendable, Equatable {
        /// Longest time to resolve the host and connect (including the TLS handshake); default 10 s.
        public var connect: Duration
        /// Longest time for the whole request, redirects included; default 60 s.
        public var total: Duration

        /// Creates time limits.
        public init(connect: Duration = .seconds(10), total: Duration = .seconds(60)) {
            self.connect = connect
            self.total = total
        }
    }

    /// TLS settings. Verification of the server's certificate and host name is always on.
    public struct TLS: Sendable, Equatable {
        /// The environment variables consulted, in order, when `caBundle` is `nil`.
        public static let caBundleEnvironmentVariables = ["PORTAL_AUTH_CA_BUNDLE", "CURL_CA_BUNDLE", "SSL_CERT_FILE"]

        /// A PEM file of the certificate authorities to trust instead of the system's, e.g. a corporate
        /// TLS-interception CA. When `nil`, the first non-empty variable of `caBundleEnvironmentVariables`
        /// names it, else libcurl's built-in bundle is used. (libcurl itself reads none of these variables.)
        public var caBundle: URL?

        /// Creates TLS settings.
        public init(caBundle: URL? = nil) {
            self.caBundle = caBundle
        }

        /// The CA bundle to use: `caBundle`, else the first non-empty variable of
        /// `caBundleEnvironmentVariables` in `environment`, else `nil` (libcurl's default).
        public func effectiveCABundle(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL? {
            if let caBundle { return caBundle }
            for name in Self.caBundleEnvironmentVariables {
                if let path = environment[name], !path.isEmpty { return URL(fileURLWithPath: path) }
            }
            return nil
        }
    }

    /// The version sent in the default user agent.
    public static let version = PortalAuthVersion.string

    /// Time limits.
    public var timeouts: Timeouts
    /// TLS settings.
    public var tls: TLS
    /// Largest response body accepted (after decoding); a larger one fails with a transport error (responseTooLarge; a `CategorizedError`).
    /// Default 4 MiB.
    public var maxResponseBytes: Int
    /// Whether to follow redirects (301, 302, 303, 307, 308); default `false`, because a token endpoint must not
    /// redirect silently. Each hop is checked like the first (no `http` to non-loopback hosts, no https → http);
    /// request credentials and the `Authorization` and `Cookie` fields are dropped when the host changes.
    public var followRedirects: Bool
    /// Most redirects followed before failing; default 5.
    public var maxRedirects: Int
    /// The `User-Agent` sent when a request has none; default `portal-auth/<version>`.
    public var userAgent: String
    /// The end of the whole operation the client serves (a command's `--timeout`), across requests, retries and
    /// redirects: no request runs past it (but one marked `TransportRequest.outlastsDeadline` once started), and one
    /// started after it fails at once with a transport error (timedOut; a `CategorizedError`).
    /// `nil` (the default): each request has only `timeouts.total`.
    public var deadline: ContinuousClock.Instant?

    /// Creates a configuration.
    public init(
        timeouts: Timeouts = Timeouts(),
        tls: TLS = TLS(),
        maxResponseBytes: Int = 4 * 1024 * 1024,
        followRedirects: Bool = false,
        maxRedirects: Int = 5,
        userAgent: String = "portal-auth/\(TransportConfiguration.version)",
        deadline: ContinuousClock.Instant? = nil
    ) {
        self.deadline = deadline
        self.timeouts = timeouts
        self.tls = tls
        self.maxResponseBytes = maxResponseBytes
        self.followRedirects = followRedirects
        self.maxRedirects = maxRedirects
        self.userAgent = userAgent
    }
}
