import Foundation
import Testing

/// The bundled test server (`scripts/authserver start`, `source .run/authserver.env`), as an app would be configured
/// for its portal: read from the `PORTAL_AUTH_TEST_*` variables.
enum LocalServer {
    /// Whether the server is there; with `PORTAL_AUTH_REQUIRE_INTEGRATION=1` (set by `scripts/test`) a missing server
    /// is a failure, not a skip.
    static var isConfigured: Bool {
        let environment = ProcessInfo.processInfo.environment
        return environment["PORTAL_AUTH_TEST_SERVER"] != nil || environment["PORTAL_AUTH_REQUIRE_INTEGRATION"] == "1"
    }

    /// A `PORTAL_AUTH_TEST_*` value, or a recorded failure.
    static func value(_ name: String) throws -> String {
        guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else {
            Issue.record("\(name) is not set: start the server with scripts/authserver start and source .run/authserver.env, or run scripts/test")
            throw CancellationError()
        }
        return value
    }

    /// The portal URL (`http://127.0.0.1:PORT/arcgis`).
    static var portal: URL {
        get throws { try #require(URL(string: value("PORTAL_AUTH_TEST_PORTAL"))) }
    }

    /// The portal's `portals/self`, which answers 499 without a token.
    static var portalSelf: URL {
        get throws { try portal.appending(path: "sharing/rest/portals/self").appending(queryItems: [URLQueryItem(name: "f", value: "json")]) }
    }

    /// The OAuth client registered for browser sign-ins.
    static var clientID: String {
        get throws { try value("PORTAL_AUTH_TEST_CLIENT_ID") }
    }

    /// The command that drives headless Chromium through the sign-in page (the app's "system browser").
    static var browser: String {
        get throws { try value("PORTAL_AUTH_TEST_BROWSER") }
    }

    /// alice's password.
    static var password: String {
        get throws {
            try String(contentsOfFile: value("PORTAL_AUTH_TEST_PASSWORD_FILE"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }
}
