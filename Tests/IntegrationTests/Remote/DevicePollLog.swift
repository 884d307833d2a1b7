import Foundation
import Testing
@testable import PortalAuth

/// The test server's record of its answers to device-code polls (`/testctl/stats` `device_polls`), in order:
/// `authorization_pending`, `slow_down`, `access_denied`, `expired_token`, `token`. Cleared by `reset-stats`.
struct DevicePollLog {
    let control: TestControl

    /// The answers since the last reset of the statistics.
    func answers() async throws -> [String] {
        let url = URL(string: "\(control.server.testControl)/stats")!
        let json = try JSONValue.parse(try await CurlHTTPClient().send(.get(url)).body)
        return (json["device_polls"]?.arrayValue ?? []).compactMap(\.stringValue)
    }

    /// Waits until the server has given `answer` at least once; false after `timeout` (a hang guard only).
    func waitFor(_ answer: String, timeout: Duration = .seconds(60)) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await answers().contains(answer) { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return false
    }
}
