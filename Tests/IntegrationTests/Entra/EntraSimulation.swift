import Foundation
import Testing
@testable import PortalAuth

/// The Microsoft Entra ID simulation started by `scripts/entra start` (Tests/Entra/entra_sim.py; Tests/Entra/README.md
/// names the Microsoft documents it follows), described by the `PORTAL_AUTH_ENTRA_*` variables of `.run/entra.env`:
/// login.microsoftonline.com, login.microsoftonline.us, graph.microsoft.com and maps-contoso.msappproxy.net behind a
/// CONNECT proxy on 127.0.0.1, with a test CA of its own.
struct EntraSimulation: Sendable {
    /// The proxy, as `https_proxy` (`http://127.0.0.1:PORT`).
    let proxy: String
    /// `http://127.0.0.1:PORT/control`: the simulation's steering endpoints (see entra_sim.py's `control`).
    let control: String
    /// The PEM file of the test CA, as `PORTAL_AUTH_CA_BUNDLE`.
    let caBundle: String
    /// The browser command: follows the sign-in and sign-out pages with HTTP requests, no Chromium.
    let browser: String
    /// The folder of the IAP configurations (the seed's JSON with each tenant form): `guid.json`, `onmicrosoft.json`,
    /// `custom-domain.json`, `organizations.json`, `common.json`, `consumers.json`, `usgov.json`, `no-public-client.json`,
    /// `unknown-client.json`, `unknown-tenant.json`, `unregistered-redirect.json`.
    let configs: String
    /// One JSON line per request the TLS server answered (host, method, path, status, bearer).
    let requestLog: String
    /// `https://maps-contoso.msappproxy.net`: the app proxy of the Contoso tenant.
    let app: String
    let tenantID: String
    let otherTenantID: String
    let govTenantID: String
    let clientID: String

    /// Whether the simulation's variables are present; with `PORTAL_AUTH_REQUIRE_INTEGRATION=1` (scripts/test) a
    /// missing simulation is a failure, not a skip.
    static var isConfigured: Bool { ServerVariables.isConfigured(by: "PORTAL_AUTH_ENTRA_PROXY") }

    static func current() throws -> EntraSimulation {
        let variables = ServerVariables(
            start: "start the simulation with scripts/entra start and source .run/entra.env")
        return EntraSimulation(
            proxy: try variables.value("PORTAL_AUTH_ENTRA_PROXY"),
            control: try variables.value("PORTAL_AUTH_ENTRA_CONTROL"),
            caBundle: try variables.value("PORTAL_AUTH_ENTRA_CA_BUNDLE"),
            browser: try variables.value("PORTAL_AUTH_ENTRA_BROWSER"),
            configs: try variables.value("PORTAL_AUTH_ENTRA_CONFIGS"),
            requestLog: try variables.value("PORTAL_AUTH_ENTRA_REQUEST_LOG"),
            app: try variables.value("PORTAL_AUTH_ENTRA_APP"),
            tenantID: try variables.value("PORTAL_AUTH_ENTRA_TENANT_ID"),
            otherTenantID: try variables.value("PORTAL_AUTH_ENTRA_OTHER_TENANT_ID"),
            govTenantID: try variables.value("PORTAL_AUTH_ENTRA_GOV_TENANT_ID"),
            clientID: try variables.value("PORTAL_AUTH_ENTRA_CLIENT_ID"))
    }

    /// The path of the IAP configuration `name` (`guid`, `organizations`, …).
    func config(_ name: String) -> String { configs + "/\(name).json" }

    // MARK: - Steering

    /// POSTs to `/control/PATH?QUERY`; the answer's JSON.
    @discardableResult
    func steer(_ path: String, _ query: [String: String] = [:]) async throws -> JSONValue {
        var components = URLComponents(string: control + "/" + path)!
        if !query.isEmpty { components.queryItems = query.map { URLQueryItem(name: $0.key, value: $0.value) } }
        let response = try await CurlHTTPClient().send(TransportRequest(method: .post, url: components.url!))
        #expect(response.statusCode == 200, "\(path): \(String(decoding: response.body, as: UTF8.self))")
        return try JSONValue.parse(response.body)
    }

    /// The simulation, reset, and an empty store: where each test starts.
    static func fresh() async throws -> (EntraSimulation, ScratchStore) {
        let entra = try current()
        try await entra.reset()
        return (entra, try ScratchStore())
    }

    /// Puts the simulation back as it started (two published keys, no pending failure or forgery) and clears counts.
    func reset() async throws { try await steer("reset") }

    /// The counts, the published keys, the logouts.
    func state() async throws -> JSONValue {
        let response = try await CurlHTTPClient().send(.get(URL(string: control + "/state")!))
        return try JSONValue.parse(response.body)
    }

    /// How many times the simulation served `name` since the last reset (`authorize`, `token_refresh_token`,
    /// `userinfo`, `discovery_v2`, `logout`, `app_proxy`, …).
    func count(_ name: String) async throws -> Int {
        try await state()["counts"]?[name]?.integerValue.map(Int.init) ?? 0
    }

    /// A mark in the request log, for `requests(since:)`.
    func mark() throws -> Int { try logLines().count }

    /// The requests the TLS server answered after `mark`: `(host, path, status)`.
    func requests(since mark: Int) throws -> [(host: String, path: String, status: Int)] {
        try logLines().dropFirst(mark).compactMap { line in
            guard let entry = try? JSONValue.parse(Data(line.utf8)), let host = entry["host"]?.stringValue,
                let path = entry["path"]?.stringValue, let status = entry["status"]?.integerValue.map(Int.init)
            else { return nil }
            return (host, path, status)
        }
    }

    private func logLines() throws -> [String] {
        guard FileManager.default.fileExists(atPath: requestLog) else { return [] }
        return try String(contentsOf: URL(fileURLWithPath: requestLog), encoding: .utf8).split(separator: "\n").map(
            String.init)
    }

    // MARK: - The tool

    /// The tool's environment: the simulation's proxy and CA, `store`, a browser log; no other proxy setting.
    func environment(_ store: ScratchStore) -> [String: String] {
        [
            "PORTAL_AUTH_STORE": store.path, "https_proxy": proxy, "PORTAL_AUTH_CA_BUNDLE": caBundle,
            "PORTAL_AUTH_ENTRA_BROWSER_LOG": store.directory.appendingPathComponent("browser.log").path,
        ]
    }

    static let otherProxyVariables = ["HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY", "http_proxy"]

    /// `portal-auth ARGUMENTS` with `store`, through the simulation.
    func run(_ arguments: [String], _ store: ScratchStore, timeout: Duration = .seconds(60)) async throws
        -> ToolRunner.Result
    {
        try await ToolRunner.run(
            arguments, environment: environment(store), removing: Self.otherProxyVariables, timeout: timeout)
    }

    /// `iap login --config CONFIG` with the simulation's browser.
    func login(_ config: String, _ store: ScratchStore, timeout: Int = 30, extra: [String] = []) async throws
        -> ToolRunner.Result
    {
        try await run(
            ["iap", "login", "--config", self.config(config), "--browser-command", browser, "--timeout", "\(timeout)"]
                + extra, store, timeout: .seconds(timeout + 30))
    }

    /// The one stored IAP entry's field `name`.
    static func stored(_ name: String, in store: ScratchStore) throws -> String {
        let entry = try #require(try store.entries().values.first { $0["kind"]?.stringValue == "iap" })
        return try #require(entry[name]?.stringValue, "no \(name) stored")
    }

    /// Whether an IAP sign-in is stored.
    static func hasSignIn(_ store: ScratchStore) -> Bool {
        ((try? store.entries()) ?? [:]).values.contains { $0["kind"]?.stringValue == "iap" }
    }
}
