import Foundation
import Testing
@testable import PortalAuth

/// The real Identity-Aware Proxy started by `scripts/iap-proxy start` (Apache httpd + mod_auth_openidc before
/// Tests/IAPProxy/backend.py; see Tests/IAPProxy/README.md), described by the `PORTAL_AUTH_IAP_PROXY_*` variables of
/// `.run/iap-proxy.env`.
struct IAPProxyServer: Sendable {
    /// The proxy's hosts and configuration files for one test provider.
    struct Provider: Sendable {
        /// `authserver` or `glewlwyd`.
        let name: String
        /// `http://app.NAME.localhost:PORT`: `/auth/` (OIDCUnAuthAction auth), `/api/` (401), `/portal/` (302 to the
        /// proxy's own /signin.html); ID tokens of the test client accepted.
        let app: String
        /// `http://post.NAME.localhost:PORT`: the auto-post page (OIDCProviderAuthRequestMethod POST).
        let post: String
        /// `http://access.NAME.localhost:PORT`: access tokens accepted, ID tokens refused.
        let access: String
        /// An IAP configuration of the provider's test client for `*.NAME.localhost`.
        let config: String
        let issuer: String
        /// The same for a client of the provider whose tokens the proxy refuses (Glewlwyd only).
        let otherConfig: String?
    }

    let port: Int
    let accessLog: String
    let providers: [String: Provider]

    /// Whether the proxy's variables are present; with `PORTAL_AUTH_REQUIRE_INTEGRATION=1` (scripts/test) a missing
    /// proxy is a failure, not a skip.
    static var isConfigured: Bool { ServerVariables.isConfigured(by: "PORTAL_AUTH_IAP_PROXY_PORT") }

    static func current() throws -> IAPProxyServer {
        let variables = ServerVariables(
            start:
                "start the proxy with scripts/iap-proxy start (after scripts/authserver and scripts/glewlwyd) and source .run/iap-proxy.env"
        )
        var providers: [String: Provider] = [:]
        for name in try variables.value("PORTAL_AUTH_IAP_PROXY_PROVIDERS").split(separator: " ").map(String.init) {
            let prefix = "PORTAL_AUTH_IAP_PROXY_\(name.uppercased())_"
            providers[name] = Provider(
                name: name, app: try variables.value(prefix + "APP"), post: try variables.value(prefix + "POST"),
                access: try variables.value(prefix + "ACCESS"),
                config: try variables.value(prefix + "CONFIG"), issuer: try variables.value(prefix + "ISSUER"),
                otherConfig: variables.environment[prefix + "OTHER_CONFIG"])
        }
        let port = try variables.number("PORTAL_AUTH_IAP_PROXY_PORT")
        return IAPProxyServer(
            port: port, accessLog: try variables.value("PORTAL_AUTH_IAP_PROXY_ACCESS_LOG"), providers: providers)
    }

    /// The provider `name`, or a recorded failure when the proxy was started without it.
    func provider(_ name: String) throws -> Provider {
        guard let provider = providers[name] else {
            Issue.record("the IAP proxy protects no host with \(name): start scripts/\(name) before scripts/iap-proxy")
            throw CancellationError()
        }
        return provider
    }

    /// One line of the proxy's access log: `HOST METHOD PATH STATUS bearer=yes|-` (no query strings, no tokens).
    struct LoggedRequest: Sendable, Equatable {
        let host: String
        let path: String
        let status: Int
        let bearer: Bool
    }

    /// How many lines the access log has: a mark for `requests(since:)`.
    func mark() throws -> Int { try logLines().count }

    /// The requests logged after `mark` whose host starts with `hostPrefix` (e.g. `app.glewlwyd.`).
    ///
    /// Apache writes a request's log line after it has sent the response, and another worker may write a later
    /// request's line first: a client can read the log before the line of its last request is there. So marker
    /// requests go to the proxy, one after the other, until each has its line; a request answered before the first
    /// marker was sent has had two markers' round trips to write its line. Every line after `mark` counts, before or
    /// after the markers' (the integration suites run one test at a time, so no other test's requests are there;
    /// the markers' own lines, which Apache may log under the first virtual host's name, are left out by their path).
    func requests(since mark: Int, hostPrefix: String) async throws -> [LoggedRequest] {
        var lines = try logLines().dropFirst(mark)
        for _ in 0..<2 {
            let marker = "/iap-test-mark-\(UUID().uuidString)"
            _ = try await CurlHTTPClient().send(
                TransportRequest(url: URL(string: "http://127.0.0.1:\(port)\(marker)")!))
            lines = try logLines().dropFirst(mark)
            for _ in 0..<200 where !lines.contains(where: { $0.contains(" \(marker) ") }) {
                try await Task.sleep(for: .milliseconds(50))
                lines = try logLines().dropFirst(mark)
            }
            guard lines.contains(where: { $0.contains(" \(marker) ") }) else {
                Issue.record("the proxy's access log \(accessLog) has no line for the marker request \(marker)")
                throw CancellationError()
            }
        }
        return lines.compactMap { line in
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count == 5, fields[0].hasPrefix(hostPrefix), !fields[2].hasPrefix("/iap-test-mark-"),
                let status = Int(fields[3])
            else { return nil }
            return LoggedRequest(host: fields[0], path: fields[2], status: status, bearer: fields[4] == "bearer=yes")
        }
    }

    private func logLines() throws -> [Substring] {
        try String(contentsOf: URL(fileURLWithPath: accessLog), encoding: .utf8).split(separator: "\n")
    }

    // MARK: - Signing in and running the tool

    /// The environment of a tool run with `store` for `provider` (Glewlwyd's browser credentials and profile).
    func environment(_ provider: Provider, _ store: ScratchStore) throws -> [String: String] {
        if provider.name == "glewlwyd" { return try GlewlwydServer.current().environment(store) }
        return [
            "PORTAL_AUTH_STORE": store.path,
            "PORTAL_AUTH_TEST_BROWSER_LOG": store.directory.appendingPathComponent("browser.log").path,
        ]
    }

    /// `iap login --config config` through headless Chromium on the provider's login page.
    func login(_ provider: Provider, _ store: ScratchStore, config: String? = nil, extra: [String] = []) async throws
        -> ToolRunner.Result
    {
        let browser =
            provider.name == "glewlwyd" ? try GlewlwydServer.current().browser : try TestServer.current().browser
        return try await ToolRunner.run(
            ["iap", "login", "--config", config ?? provider.config, "--browser-command", browser, "--timeout", "90"]
                + extra,
            environment: try environment(provider, store), timeout: .seconds(120))
    }

    /// `portal-auth ARGUMENTS` with `store` for `provider`.
    func run(_ arguments: [String], _ provider: Provider, _ store: ScratchStore, timeout: Duration = .seconds(60))
        async throws -> ToolRunner.Result
    {
        try await ToolRunner.run(arguments, environment: try environment(provider, store), timeout: timeout)
    }

    /// The backend's JSON answer in `result`'s standard output.
    static func backendAnswer(_ result: ToolRunner.Result) throws -> JSONValue {
        let answer = try JSONValue.parse(Data(result.stdout.utf8))
        #expect(answer["app"]?.stringValue == "iap-backend", "the backend answered: \(result)")
        return answer
    }

    /// The one stored IAP entry's field `name`.
    static func stored(_ name: String, in store: ScratchStore) throws -> String {
        let entry = try #require(try store.entries().values.first { $0["kind"]?.stringValue == "iap" })
        return try #require(entry[name]?.stringValue, "no \(name) stored")
    }

    /// The claims of a compact JWT (no signature check: the proxy checked it).
    static func claims(of token: String) throws -> IDToken { try IDToken(compact: token) }
}
