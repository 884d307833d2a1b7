import Foundation
import Testing
@testable import PortalAuth

/// LemonLDAP::NG started by `scripts/lemonldap start` (Debian's lemonldap-ng: its portal as the OpenID provider with
/// 20-second access tokens and 30-second ID tokens, its handler before Tests/IAPProxy/backend.py; see
/// Tests/LemonLDAP/README.md), described by the `PORTAL_AUTH_LEMONLDAP_*` variables of `.run/lemonldap.env`.
struct LemonLDAPServer: Sendable {
    let port: Int
    let portal: String
    let issuer: String
    /// `http://app.lemonldap.localhost:PORT`: the handler's cookie vhost (302 to the portal, JSON 401 to JSON).
    let app: String
    /// `http://api.lemonldap.localhost:PORT`: the handler's OAuth2 vhost (the provider's access tokens).
    let api: String
    /// `http://id.lemonldap.localhost:PORT`: the backend without the handler (which accepts no ID token): what the
    /// tool sends to a host behind the proxy by default is seen there.
    let id: String
    /// The IAP configuration of the test client, `hosts_behind_proxy: ["*.lemonldap.localhost"]`.
    let config: String
    /// The same for a client with the provider's default lifetimes (an hour): the logout tests', whose check of an
    /// ended session asks with an access token that must still be valid after the browser's round trip.
    let longConfig: String
    let user: String
    let passwordFile: String
    let accessLog: String
    /// The access token's and the ID token's lifetimes, in seconds.
    let accessTokenLifetime: Int
    let idTokenLifetime: Int
    /// The test browser command (headless Chromium through Tests/BrowserDriver).
    let browser: String

    /// Whether the server's variables are present; with `PORTAL_AUTH_REQUIRE_INTEGRATION=1` (scripts/test) a missing
    /// server is a failure, not a skip.
    static var isConfigured: Bool { ServerVariables.isConfigured(by: "PORTAL_AUTH_LEMONLDAP_PORT") }

    static func current() throws -> LemonLDAPServer {
        let variables = ServerVariables(
            start: "start LemonLDAP::NG with scripts/lemonldap start and source .run/lemonldap.env")
        return LemonLDAPServer(
            port: try variables.number("PORTAL_AUTH_LEMONLDAP_PORT"),
            portal: try variables.value("PORTAL_AUTH_LEMONLDAP_PORTAL"),
            issuer: try variables.value("PORTAL_AUTH_LEMONLDAP_ISSUER"),
            app: try variables.value("PORTAL_AUTH_LEMONLDAP_APP"),
            api: try variables.value("PORTAL_AUTH_LEMONLDAP_API"), id: try variables.value("PORTAL_AUTH_LEMONLDAP_ID"),
            config: try variables.value("PORTAL_AUTH_LEMONLDAP_CONFIG"),
            longConfig: try variables.value("PORTAL_AUTH_LEMONLDAP_LONG_CONFIG"),
            user: try variables.value("PORTAL_AUTH_LEMONLDAP_USER"),
            passwordFile: try variables.value("PORTAL_AUTH_LEMONLDAP_PASSWORD_FILE"),
            accessLog: try variables.value("PORTAL_AUTH_LEMONLDAP_ACCESS_LOG"),
            accessTokenLifetime: try variables.number("PORTAL_AUTH_LEMONLDAP_ACCESS_TOKEN_LIFETIME"),
            idTokenLifetime: try variables.number("PORTAL_AUTH_LEMONLDAP_ID_TOKEN_LIFETIME"),
            browser: variables.browser)
    }

    // MARK: - Running the tool

    /// The environment of a tool run: the store, and the browser driver's credentials, log and profile (`profile`:
    /// a Chromium profile of the store's that keeps the portal's cookie from one browser run to the next; `nil`, a
    /// fresh profile without it).
    func environment(_ store: ScratchStore, profile: String? = "profile") -> [String: String] {
        var environment = [
            "PORTAL_AUTH_STORE": store.path,
            "PORTAL_AUTH_TEST_USERNAME": user, "PORTAL_AUTH_TEST_PASSWORD_FILE": passwordFile,
            "PORTAL_AUTH_TEST_BROWSER_LOG": store.directory.appendingPathComponent("browser.log").path,
            "PORTAL_AUTH_LEMONLDAP_PORTAL": portal,
        ]
        if let profile {
            environment["PORTAL_AUTH_TEST_BROWSER_PROFILE"] = store.directory.appendingPathComponent(profile).path
        }
        return environment
    }

    /// `iap login --config config` (the short-lived client's by default) through headless Chromium on the portal's
    /// login form.
    func login(_ store: ScratchStore, config: String? = nil) async throws -> ToolRunner.Result {
        try await ToolRunner.run(
            ["iap", "login", "--config", config ?? self.config, "--browser-command", browser, "--timeout", "90"],
            environment: environment(store), timeout: .seconds(120))
    }

    /// `portal-auth ARGUMENTS` with `store`.
    func run(
        _ arguments: [String], _ store: ScratchStore, profile: String? = "profile", timeout: Duration = .seconds(60)
    ) async throws -> ToolRunner.Result {
        try await ToolRunner.run(arguments, environment: environment(store, profile: profile), timeout: timeout)
    }

    /// The one stored IAP entry's field `name`.
    static func stored(_ name: String, in store: ScratchStore) throws -> String {
        let entry = try #require(try store.entries().values.first { $0["kind"]?.stringValue == "iap" })
        return try #require(entry[name]?.stringValue, "no \(name) stored")
    }

    /// The payload of a compact JWT (no signature check: the provider's handler checks the tokens it is sent).
    static func payload(of token: String) throws -> JSONValue {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        try #require(parts.count == 3, "a JWT has three parts")
        return try JSONValue.parse(Data(try #require(Base64URL.decode(parts[1]))))
    }

    /// Waits until `token` (a JWT) has expired by its `exp` claim, checking every second; a hang guard of the
    /// lifetime and a minute fails the test instead of waiting forever. No duration is asserted.
    func waitUntilExpired(_ token: String) async throws {
        let expiry = try #require(try Self.payload(of: token)["exp"]?.integerValue, "the token has an exp claim")
        for _ in 0..<(max(accessTokenLifetime, idTokenLifetime) + 60) {
            if Int64(Date().timeIntervalSince1970) > expiry { return }
            try await Task.sleep(for: .seconds(1))
        }
        Issue.record("the token did not expire within its lifetime and a minute")
        throw CancellationError()
    }

    // MARK: - The access log

    /// One line of nginx's access log: `HOST METHOD PATH STATUS bearer=yes|-` (no query strings, no tokens).
    struct LoggedRequest: Sendable, Equatable {
        let host: String
        let method: String
        let path: String
        let status: Int
        let bearer: Bool
    }

    /// How many lines the access log has: a mark for `requests(since:)`.
    func mark() throws -> Int { try logLines().count }

    /// The requests logged after `mark`. nginx writes a request's line after the response has gone, so a client can
    /// read the log before its last request's line is there: marker requests to the backend's host go out one after
    /// the other until each has its line (the markers' own lines are left out).
    func requests(since mark: Int) async throws -> [LoggedRequest] {
        var lines = try logLines().dropFirst(mark)
        for _ in 0..<2 {
            let marker = "/lemonldap-test-mark-\(UUID().uuidString)"
            _ = try await CurlHTTPClient().send(TransportRequest(url: URL(string: id + marker)!))
            for _ in 0..<200 {
                lines = try logLines().dropFirst(mark)
                if lines.contains(where: { $0.contains(" \(marker) ") }) { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            try #require(
                lines.contains { $0.contains(" \(marker) ") },
                "the access log \(accessLog) has the marker request's line")
        }
        return lines.compactMap { line in
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count == 5, !fields[2].hasPrefix("/lemonldap-test-mark-"), let status = Int(fields[3]) else {
                return nil
            }
            return LoggedRequest(
                host: fields[0], method: fields[1], path: fields[2], status: status, bearer: fields[4] == "bearer=yes")
        }
    }

    /// The refresh requests (token endpoint) among `requests`: the sign-in's code exchange is one too.
    static func tokenRequests(_ requests: [LoggedRequest]) -> [LoggedRequest] {
        requests.filter { $0.method == "POST" && $0.path == "/oauth2/token" }
    }

    private func logLines() throws -> [Substring] {
        try String(contentsOf: URL(fileURLWithPath: accessLog), encoding: .utf8).split(separator: "\n")
    }
}
