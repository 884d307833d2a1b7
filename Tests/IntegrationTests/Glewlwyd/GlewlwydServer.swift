import Foundation
import Testing
@testable import PortalAuth

/// Glewlwyd started and provisioned by `scripts/glewlwyd start`, described by the `PORTAL_AUTH_GLEWLWYD_*` variables
/// of `.run/glewlwyd.env`: an independent OpenID provider (RS256, PKCE required, one-use refresh tokens, RFC 9207
/// `iss`, end_session, revocation refused to public clients).
struct GlewlwydServer: Sendable {
    let base: String
    let issuer: String
    let clientID: String
    /// The client's one registered redirect URL (a fixed port: Glewlwyd compares redirect URLs exactly).
    let redirect: String
    let iapConfig: String
    let user: String
    let passwordFile: String
    /// The test browser command (headless Chromium through Tests/BrowserDriver).
    let browser: String

    /// Whether the server's variables are present; with `PORTAL_AUTH_REQUIRE_INTEGRATION=1` (scripts/test) a missing
    /// server is a failure, not a skip.
    static var isConfigured: Bool { ServerVariables.isConfigured(by: "PORTAL_AUTH_GLEWLWYD_BASE") }

    static func current() throws -> GlewlwydServer {
        let variables = ServerVariables(
            start: "start Glewlwyd with scripts/glewlwyd start and source .run/glewlwyd.env")
        return GlewlwydServer(
            base: try variables.value("PORTAL_AUTH_GLEWLWYD_BASE"),
            issuer: try variables.value("PORTAL_AUTH_GLEWLWYD_ISSUER"),
            clientID: try variables.value("PORTAL_AUTH_GLEWLWYD_CLIENT_ID"),
            redirect: try variables.value("PORTAL_AUTH_GLEWLWYD_REDIRECT"),
            iapConfig: try variables.value("PORTAL_AUTH_GLEWLWYD_IAP_CONFIG"),
            user: try variables.value("PORTAL_AUTH_GLEWLWYD_USER"),
            passwordFile: try variables.value("PORTAL_AUTH_GLEWLWYD_PASSWORD_FILE"),
            browser: variables.browser)
    }

    /// The environment of a tool run: the store, and the browser driver's Glewlwyd credentials, log and profile.
    func environment(_ store: ScratchStore, profile: Bool = true) -> [String: String] {
        var environment = [
            "PORTAL_AUTH_STORE": store.path,
            "PORTAL_AUTH_TEST_USERNAME": user, "PORTAL_AUTH_TEST_PASSWORD_FILE": passwordFile,
            "PORTAL_AUTH_TEST_BROWSER_LOG": store.directory.appendingPathComponent("browser.log").path,
            "PORTAL_AUTH_GLEWLWYD_BASE": base,
        ]
        if profile {
            environment["PORTAL_AUTH_TEST_BROWSER_PROFILE"] = store.directory.appendingPathComponent("profile").path
        }
        return environment
    }

    /// A copy of the provisioned IAP configuration in `store`'s folder, with `change` applied.
    func configuration(
        in store: ScratchStore, name: String = "glewlwyd-iap.json", _ change: (inout JSONObject) -> Void = { _ in }
    ) throws -> String {
        var object = try #require(try JSONValue.parse(Data(contentsOf: URL(fileURLWithPath: iapConfig))).objectValue)
        change(&object)
        let path = store.directory.appendingPathComponent(name).path
        try Data(JSONValue.object(object).serialized().utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// `iap login` through headless Chromium on Glewlwyd's login page.
    func login(_ config: String, _ store: ScratchStore, extra: [String] = [], environment: [String: String] = [:])
        async throws -> ToolRunner.Result
    {
        try await ToolRunner.run(
            ["iap", "login", "--config", config, "--browser-command", browser, "--timeout", "90"] + extra,
            environment: self.environment(store).merging(environment) { $1 }, timeout: .seconds(120))
    }

    /// A token-endpoint request with `fields`, as a script would send it.
    func token(_ fields: [(String, String)]) async throws -> TransportResponse {
        try await CurlHTTPClient().send(.form(URL(string: "\(issuer)/token")!, fields: fields))
    }
}
