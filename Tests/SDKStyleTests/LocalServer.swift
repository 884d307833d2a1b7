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
            Issue.record(
                "\(name) is not set: start the server with scripts/authserver start and source .run/authserver.env, or run scripts/test"
            )
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
        get throws {
            try portal.appending(path: "sharing/rest/portals/self").appending(queryItems: [
                URLQueryItem(name: "f", value: "json")
            ])
        }
    }

    /// The OAuth client registered for browser sign-ins.
    static var clientID: String {
        get throws { try value("PORTAL_AUTH_TEST_CLIENT_ID") }
    }

    /// The command that drives headless Chromium through the sign-in page (the app's "system browser").
    static var browser: String {
        get throws { try value("PORTAL_AUTH_TEST_BROWSER") }
    }

    /// A stand-alone ArcGIS Server's services (no owning portal): token authentication without OAuth.
    static var standaloneServices: URL {
        get throws { try #require(URL(string: value("PORTAL_AUTH_TEST_SERVER") + "/standalone/rest/services?f=json")) }
    }

    /// The IAP configuration file of the test server's proxied app.
    static var iapConfiguration: URL {
        get throws { URL(filePath: try value("PORTAL_AUTH_TEST_IAP_CONFIG")) }
    }

    /// The app behind the test server's Identity-Aware Proxy (`http://localhost:PORT/iap/app/`).
    static var iapApp: URL {
        get throws { try #require(URL(string: value("PORTAL_AUTH_TEST_IAP_URL"))) }
    }

    /// The session bus of the desktop keyring `scripts/test` started (`PORTAL_AUTH_TEST_KEYRING_ENV` names its
    /// environment file; `scripts/keyring start` and `export PORTAL_AUTH_TEST_KEYRING_ENV=$(scripts/keyring env)` by
    /// hand).
    static var keyringBus: String {
        get throws {
            let file = try value("PORTAL_AUTH_TEST_KEYRING_ENV")
            let text = try String(contentsOfFile: file, encoding: .utf8)
            let prefix = "export DBUS_SESSION_BUS_ADDRESS="
            let line = try #require(
                text.split(separator: "\n").first { $0.hasPrefix(prefix) }, "no session bus in \(file)")
            return String(line.dropFirst(prefix.count)).trimmingCharacters(in: CharacterSet(charactersIn: "'"))
        }
    }

    /// alice's password.
    static var password: String {
        get throws {
            try String(contentsOfFile: value("PORTAL_AUTH_TEST_PASSWORD_FILE"), encoding: .utf8).trimmingCharacters(
                in: .whitespacesAndNewlines)
        }
    }
}
