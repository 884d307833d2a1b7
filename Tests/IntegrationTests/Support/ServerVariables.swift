import Foundation
import Testing

/// The variables a test server's start script wrote to `.run/NAME.env` (`scripts/authserver`, `scripts/glewlwyd`,
/// `scripts/lemonldap`, `scripts/iap-proxy`, `scripts/entra`), as the suites read them: a missing or malformed one is
/// a recorded failure that says how to start the server, never a crash.
struct ServerVariables {
    let environment = ProcessInfo.processInfo.environment
    /// What to do when a variable is missing, e.g. "start Glewlwyd with scripts/glewlwyd start and source
    /// .run/glewlwyd.env".
    let start: String

    /// Whether the server's `variable` is present. `scripts/test` sets `PORTAL_AUTH_REQUIRE_INTEGRATION=1`, and then a
    /// missing server is a failure, not a skip.
    static func isConfigured(by variable: String) -> Bool {
        let environment = ProcessInfo.processInfo.environment
        return environment[variable] != nil || environment["PORTAL_AUTH_REQUIRE_INTEGRATION"] == "1"
    }

    /// The value of `name`, or a recorded failure when it is unset or empty.
    func value(_ name: String) throws -> String {
        guard let value = environment[name], !value.isEmpty else {
            Issue.record("\(name) is not set: \(start), or run scripts/test")
            throw CancellationError()
        }
        return value
    }

    /// The value of `name` as a number, or a recorded failure.
    func number(_ name: String) throws -> Int {
        guard let number = Int(try value(name)) else {
            Issue.record("\(name) is not a number")
            throw CancellationError()
        }
        return number
    }

    /// The test browser command: `PORTAL_AUTH_TEST_BROWSER`, else headless Chromium through Tests/BrowserDriver.
    var browser: String {
        environment["PORTAL_AUTH_TEST_BROWSER"]
            ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("BrowserDriver/portal-auth-test-browser").path
    }
}
