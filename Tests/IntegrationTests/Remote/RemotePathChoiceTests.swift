import Foundation
import Testing
@testable import PortalAuth

/// The choice of path of the built tool, in controlled environments against the test server: an SSH session whose
/// display is local, one with a forwarded display, a browser command that fails, and the options that force a path. `BROWSER` names a command that
/// either records that it ran (it must not run) or is the real headless browser.
@Suite("Remote path choice by environment", .serialized, .enabled(if: TestServer.isConfigured))
struct RemotePathChoiceTests {
    private static let ssh = ["SSH_CONNECTION": "192.0.2.1 50000 192.0.2.2 22", "SSH_CLIENT": "192.0.2.1 50000 22"]

    /// A desktop launcher `xdg-open` that only leaves a file behind when it runs, first on `PATH` (`BROWSER` is not
    /// set: a named browser is tried everywhere, issue 34).
    private func recordingBrowser(in store: ScratchStore) throws -> (path: String, ranFile: String) {
        let folder = store.directory.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let command = folder.appendingPathComponent("xdg-open").path
        let ranFile = store.directory.appendingPathComponent("browser-ran").path
        try "#!/bin/sh\necho ran > '\(ranFile)'\n".write(toFile: command, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: command)
        return (folder.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"), ranFile)
    }

    /// Approves the device code the tool shows in the real headless browser and returns the tool's exit status.
    private func approve(_ tool: HeadlessTool, server: TestServer) async throws -> Int32 {
        let page = try tool.deviceCodePage(server: server)
        #expect(try TestBrowserRun.run(page) == 0)
        return try await BlockingWork.run { tool.finish() }
    }

    /// An environment (beside no display, no BROWSER and no SSH variables) and the options given.
    struct Setting: Sendable, CustomTestStringConvertible {
        let name: String
        let options: [String]
        let environment: [String: String]
        /// What the tool says about the browser it does not open, when the choice is its own.
        let reason: String?
        var testDescription: String { name }
    }

    static let deviceCodeSettings = [
        Setting(
            name: "an SSH session whose DISPLAY is local (:0)", options: [],
            environment: ssh.merging(["DISPLAY": ":0"]) { $1 },
            reason: "No browser is opened here: this is an SSH session without a forwarded display"),
        Setting(
            name: "--device-code where a display is", options: ["--device-code"], environment: ["DISPLAY": ":0"],
            reason: nil),
    ]

    @Test("the device code, approved in the browser; the browser command never runs", arguments: deviceCodeSettings)
    func deviceCodeChosen(setting: Setting) async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        let browser = try recordingBrowser(in: store)
        let tool = try HeadlessTool(
            ["iap", "login", "--config", server.iapConfig, "--timeout", "120"] + setting.options,
            environment: setting.environment.merging(["PORTAL_AUTH_STORE": store.path, "PATH": browser.path]) { $1 })
        defer { tool.stop() }
        let status = try await approve(tool, server: server)
        #expect(status == 0, "\(tool.stderr)")
        if let reason = setting.reason {
            #expect(tool.stderr.contains(reason), "\(tool.stderr)")
        } else {
            #expect(!tool.stderr.contains("No browser is opened here"), "forced, not chosen for want of a display")
        }
        #expect(!FileManager.default.fileExists(atPath: browser.ranFile), "the browser command was not started")
        #expect(try store.entries().count == 1)
    }

    static let browserSettings = [
        Setting(
            name: "an SSH session with a forwarded display (localhost:10.0)", options: [],
            environment: ssh.merging(["DISPLAY": "localhost:10.0"]) { $1 }, reason: nil),
        Setting(name: "--browser without a display", options: ["--browser"], environment: [:], reason: nil),
    ]

    @Test("the browser opens and the loopback redirect signs in; no device code", arguments: browserSettings)
    func browserChosen(setting: Setting) async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        let tool = try HeadlessTool(
            ["iap", "login", "--config", server.iapConfig, "--timeout", "120"] + setting.options,
            environment: setting.environment.merging([
                "PORTAL_AUTH_STORE": store.path, "BROWSER": server.browser, "PORTAL_AUTH_TEST_BROWSER_TIMEOUT": "60",
            ]) { $1 })
        defer { tool.stop() }
        let status = try await BlockingWork.run { tool.finish(timeout: .seconds(120)) }
        let text = tool.stderr
        #expect(status == 0, "\(text)")
        #expect(text.contains("Open this URL in a browser if one does not open by itself"))
        #expect(!text.contains("No browser is opened here") && !text.contains("device code"), "\(text)")
        #expect(try store.entries().count == 1)
    }

    @Test("a browser command that fails: straight to the device code, without the advice to open the dead URL by hand")
    func failingBrowserCommand() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        // --timeout far above the hang guards: waiting for the browser until the timeout would fail the test.
        let tool = try HeadlessTool(
            ["iap", "login", "--config", server.iapConfig, "--timeout", "600"],
            environment: [
                "PORTAL_AUTH_STORE": store.path, "DISPLAY": ":0", "BROWSER": "/bin/false",
            ])
        defer { tool.stop() }
        let status = try await approve(tool, server: server)
        let text = tool.stderr
        #expect(status == 0, "\(text)")
        #expect(
            text.contains(
                "No browser is opened here: the browser could not be started (the browser command exited with status 1)."
            ))
        #expect(!text.contains("open the URL above by hand"), "\(text)")
        let failed = try #require(text.range(of: "No browser is opened here"))
        let code = try #require(text.range(of: "and enter the code"))
        #expect(failed.lowerBound < code.lowerBound)
        #expect(try store.entries().count == 1)
    }
}
