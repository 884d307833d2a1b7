import Foundation
import Testing
@testable import PortalAuth

/// `portal-auth iap login` on a machine without a display (no DISPLAY, WAYLAND_DISPLAY or BROWSER, no terminal) and
/// with no option: the device code from the test server's discovery document, approved (or denied) by the real
/// headless browser on the verification page; slow_down and expiry come from the server's test controls.
@Suite("Device code sign-in without a display", .serialized, .enabled(if: TestServer.isConfigured),
       .disabled("the test server refuses the user code on its verification page (browser log: device code refused); the server side of the device grant is not working yet"))
struct DeviceCodeSignInTests {
    /// Starts `iap login` and waits for the device code; returns the tool and the verification page with the code.
    private func start(store: ScratchStore, extra: [String] = []) throws -> (HeadlessTool, String) {
        let server = try TestServer.current()
        let tool = try HeadlessTool(["iap", "login", "--config", server.iapConfig, "--timeout", "120"] + extra,
                                    environment: ["PORTAL_AUTH_STORE": store.path])
        #expect(tool.waitFor("Waiting for the sign-in to be approved"), "\(tool.stderr)")
        let page = try #require(tool.stderr.split(whereSeparator: \.isWhitespace).first { $0.contains("/o/device/?user_code=") },
                                "no verification_uri_complete in: \(tool.stderr)")
        return (tool, String(page))
    }

    @Test("no option: the device code is shown, approved in the browser, and the sign-in is stored and refreshable")
    func approved() async throws {
        let control = try await TestControl.prepared()
        let store = try ScratchStore()
        let (tool, page) = try start(store: store)
        defer { tool.stop() }
        #expect(try TestBrowserRun.run(page) == 0)
        let status = try await BlockingWork.run { tool.finish() }
        let text = tool.stderr
        #expect(status == 0, "\(text)")
        #expect(text.contains("No browser is opened here: there is no display"))
        #expect(text.contains("and enter the code"))
        #expect(text.contains("Signed in as alice"))
        #expect(!text.contains("not found") && !text.contains("xdg-open") && !text.contains("Open this URL in a browser if one"))
        let entry = try #require(try store.entries().first?.value)
        #expect(entry["id_token"]?.stringValue?.isEmpty == false, "the ID token is stored")

        // Refreshed like any other sign-in.
        try await control.expireAccessTokens()
        let token = try await ToolRunner.run(["token", "--iap", try TestServer.current().iapConfig, "--format", "json"],
                                             environment: ["PORTAL_AUTH_STORE": store.path])
        #expect(token.status == 0, "\(token)")
        #expect(!token.stdout.isEmpty, "\(token)")
    }

    @Test("slow_down from the server makes the tool poll 5 s less often, and the sign-in still completes")
    func slowDown() async throws {
        let control = try await TestControl.prepared()
        try await control.configure(["device_slow_down_polls": .integer(1)])
        let store = try ScratchStore()
        let (tool, page) = try start(store: store)
        defer { tool.stop() }
        #expect(tool.waitFor("checking every 6 s"), "\(tool.stderr)")
        #expect(try TestBrowserRun.run(page) == 0)
        let status = try await BlockingWork.run { tool.finish() }
        try await control.resetConfiguration()
        #expect(status == 0, "\(tool.stderr)")
    }

    @Test("denied on the verification page: exit 77, nothing stored")
    func denied() async throws {
        _ = try await TestControl.prepared()
        let store = try ScratchStore()
        let (tool, page) = try start(store: store)
        defer { tool.stop() }
        #expect(try TestBrowserRun.run(page, environment: ["PORTAL_AUTH_TEST_BROWSER_ACTION": "deny"]) == 0)
        let status = try await BlockingWork.run { tool.finish() }
        #expect(status == 77, "\(tool.stderr)")
        #expect(tool.stderr.contains("denied on the verification page (access_denied)"))
        let stored = FileManager.default.fileExists(atPath: store.path) ? try store.entries().count : 0
        #expect(stored == 0)
    }

    @Test("codes that expire before approval: exit 75 with what to do")
    func expired() async throws {
        let control = try await TestControl.prepared()
        let store = try ScratchStore()
        let (tool, _) = try start(store: store)
        defer { tool.stop() }
        try await control.expireDeviceGrants()
        let status = try await BlockingWork.run { tool.finish() }
        #expect(status == 75, "\(tool.stderr)")
        #expect(tool.stderr.contains("expired_token"))
    }

    @Test("Ctrl-C while waiting for approval ends the tool with 130")
    func interrupted() async throws {
        _ = try await TestControl.prepared()
        let store = try ScratchStore()
        let (tool, _) = try start(store: store)
        defer { tool.stop() }
        tool.send(SIGINT)
        let status = try await BlockingWork.run { tool.finish(timeout: .seconds(30)) }
        #expect(status == 130, "\(tool.stderr)")
        #expect(tool.stderr.contains("interrupted"))
    }
}
