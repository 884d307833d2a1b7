import Foundation
import Synchronization
@testable import PortalAuth
import PortalAuthTesting
@testable import PortalAuthCore
@testable import PortalAuthTransport

/// Test doubles for revocation and logout: an HTTP client that answers from a script, a browser that plays
/// the identity provider's redirect back, and credentials built from records.
enum SignOutFakes {
    static let portal = URL(string: "https://portal.example.com/portal")!
    static let revokeURL = URL(string: "https://portal.example.com/portal/sharing/rest/oauth2/revokeToken")!
    static let authorizeURL = URL(string: "https://idp.example.com/oauth2/authorize")!
    static let discoveryURL = URL(string: "https://idp.example.com/oauth2/.well-known/openid-configuration")!
    static let logoutURL = URL(string: "https://idp.example.com/oauth2/logout")!

    // MARK: - HTTP

    /// The scripted HTTP client, which records every request.
    typealias HTTP = ScriptedHTTPClient

    static func response(status: Int = 200, body: String, contentType: String = "application/json", url: URL)
        -> TransportResponse
    {
        TransportResponse(statusCode: status, headers: [("Content-Type", contentType)], body: Data(body.utf8), url: url)
    }

    /// A failure to reach the server, as a transport reports it.
    struct Unreachable: CategorizedError, CustomStringConvertible {
        var category: ErrorCategory { .unavailable }
        var description: String { "cannot connect to portal.example.com:443 (connection refused)" }
    }

    /// The form fields of a request body, decoded.
    static func fields(of request: TransportRequest) -> [String: String] {
        let body = String(decoding: request.body ?? Data(), as: UTF8.self)
        var fields: [String: String] = [:]
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            }
            fields[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        return fields
    }

    /// The query parameters of a URL.
    static func query(of url: URL) -> [String: String] {
        let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        return Dictionary(items.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
    }

    // MARK: - Browser

    /// A browser that records the URL it was given and then does `action` with it (from a task of its own).
    final class Browser: BrowserOpener {
        private let opened = Mutex<[URL]>([])
        private let action: @Sendable (URL) async -> Void

        init(_ action: @escaping @Sendable (URL) async -> Void = { _ in }) {
            self.action = action
        }

        var urls: [URL] { opened.withLock { $0 } }

        func open(_ url: URL, onExit: @escaping @Sendable (Int32) -> Void) throws(BrowserError) {
            Task { [self] in
                // Like a real browser, follow the tool's one-time loopback launch address to where it redirects.
                let target = await Self.followingLaunchAddress(url)
                opened.withLock { $0.append(target) }
                await action(target)
                onExit(0)
            }
        }

        /// Where a loopback launch address (`/launch-…`) redirects, or `url` itself.
        static func followingLaunchAddress(_ url: URL) async -> URL {
            guard url.path.hasPrefix("/launch-"),
                let response = try? await CurlHTTPClient().send(.get(url)),
                response.statusCode == 302,
                let location = response.headers["Location"].flatMap(URL.init(string:))
            else { return url }
            return location
        }

        /// A browser that follows the logout to the identity provider, which redirects back to
        /// `post_logout_redirect_uri` with the request's `state` and `extra` parameters.
        static func redirectingBack(extra: String = "") -> Browser {
            Browser { url in
                let query = SignOutFakes.query(of: url)
                guard let redirect = query["post_logout_redirect_uri"], let state = query["state"],
                    let back = URL(string: "\(redirect)?state=\(state)\(extra)")
                else { return }
                _ = try? await CurlHTTPClient().send(.get(back))
            }
        }
    }

    /// An observer that records the URLs it is shown.
    final class Observer: LogoutPageObserver {
        private let shown = Mutex<[URL]>([])
        private let written = Mutex<[URL]>([])
        var urls: [URL] { shown.withLock { $0 } }
        var pages: [URL] { written.withLock { $0 } }
        func signInWillOpenBrowser(url: URL, listeningOn redirectURL: URL) { shown.withLock { $0.append(url) } }
        func logoutPageWritten(_ page: URL) { written.withLock { $0.append(page) } }
    }

    // MARK: - Credentials

    /// The record of a signed-in portal user or IAP user.
    static func record(
        _ kind: CredentialKind, refreshToken: String? = "REFRESH-SECRET", accessToken: String = "ACCESS-SECRET",
        updatedAt: Date = Date(timeIntervalSince1970: 1_800_000_000)
    ) -> StoredCredential {
        let iap = kind == .iap
        var record = StoredCredential(
            kind: kind, clientID: iap ? "iap-client" : "portal-client", portalURL: iap ? nil : portal,
            redirectURL: URL(string: "http://127.0.0.1/callback")!,
            refreshTokenExpirationMinutes: iap ? nil : 20160, refreshTokenExchangeSeconds: iap ? nil : 86400,
            configurationFile: iap ? "/etc/iap.json" : nil, authorizeURL: iap ? authorizeURL : nil,
            tokenURL: iap
                ? URL(string: "https://idp.example.com/oauth2/token")!
                : URL(string: "https://portal.example.com/portal/sharing/rest/oauth2/token")!,
            revokeURL: iap ? nil : revokeURL, logoutURL: iap ? logoutURL : nil,
            hostsBehindProxy: iap ? ["maps.example.com"] : [],
            username: "alice", accessToken: accessToken, accessTokenExpiresAt: Date().addingTimeInterval(3600),
            refreshToken: refreshToken, refreshTokenExpiresAt: nil, idToken: iap ? "ID.TOKEN.SECRET" : nil,
            idTokenExpiresAt: nil,
            scopes: iap ? ["openid"] : [], tokenType: "Bearer", isSSLRequired: false, createdAt: updatedAt,
            updatedAt: updatedAt
        )
        // The issuer the sign-in checked: its discovery document (at `discoveryURL`) is the only one used.
        record.issuer = iap ? "https://idp.example.com/oauth2" : nil
        return record
    }

    /// Settings with `http`, no retry pause, and `browser`.
    static func settings(
        http: HTTP, browser: (any BrowserOpener)? = nil, timeout: Duration = .seconds(10),
        observer: any SignInObserver = SilentSignInObserver()
    ) -> SignInSettings {
        SignInSettings(
            browser: browser, timeout: timeout, observer: observer, httpClient: http,
            refreshPolicy: RefreshPolicy(attempts: 3, initialBackoff: .milliseconds(1)),
            // A desktop: the fake browser stands for one that can be seen (no remote path).
            environment: SignInEnvironment(hasDisplay: true, isSSHSession: false, hasForwardedDisplay: false))
    }

    static func portalCredential(_ record: StoredCredential = record(.oauthUser), http: HTTP) -> OAuthUserCredential {
        OAuthUserCredential(record: record, persistence: nil, settings: settings(http: http))
    }

    static func iapCredential(_ record: StoredCredential = record(.iap), http: HTTP) -> IAPCredential {
        IAPCredential(record: record, persistence: nil, settings: settings(http: http))
    }
}
