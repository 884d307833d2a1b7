import Foundation
import PortalAuth

/// Runs the test browser (headless Chromium through Selenium) in the foreground on `url` and returns its exit status
/// (0: it reached the end of the flow). `environment` adds the driver's knobs (action, remote mode, final-URL file).
enum TestBrowserRun {
    static func run(_ url: String, environment extra: [String: String] = [:]) throws -> Int32 {
        let server = try TestServer.current()
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: server.browser)
        process.arguments = [url]
        process.environment = ProcessInfo.processInfo.environment.merging(
            ["PORTAL_AUTH_TEST_BROWSER_FOREGROUND": "1", "PORTAL_AUTH_TEST_BROWSER_TIMEOUT": "60"].merging(extra) { $1 }
        ) { $1 }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
}
