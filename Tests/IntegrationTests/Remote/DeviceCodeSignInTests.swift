import Foundation
import Testing
@testable import PortalAuth

/// `portal-auth iap login` on a machine without a display (no DISPLAY, WAYLAND_DISPLAY or BROWSER, no terminal) and
/// with no option: the device code from the test server's discovery document, approved (or denied) by the real
/// headless browser on the verification page. The server records its answer to every poll in order
/// (``DevicePollLog``), sends `slow_down` to polls sooner than a code's interval, and its test controls set the
/// interval and lifetime of new codes.
@Suite("Device code sign-in without a display", .serialized, .enabled(if: TestServer.isConfigured))
struct DeviceCodeSignInTests {
    /// A fresh run: start-up configuration, the poll record cleared, then `configuration` applied.
    private func prepared(_ configuration: JSONObject = [:]) async throws -> (TestControl, DevicePollLog) {
        let control = try await TestControl.prepared()
        try await control.resetStats()
        if !configuration.members.isEmpty { try await control.configure(configuration) }
        return (control, DevicePollLog(control: control))
    }

    /// Starts `iap login` and waits for the device code; returns the tool and the verification page with the code
    /// filled in (``HeadlessTool/deviceCodePage(server:)``).
    private func start(store: ScratchStore, timeout: Int = 120) throws -> (HeadlessTool, String) {
        let server = try TestServer.current()
        let tool = try HeadlessTool(
            ["iap", "login", "--config", server.iapConfig, "--timeout", "\(timeout)"],
            environment: ["PORTAL_AUTH_STORE": store.path])
        return (tool, try tool.deviceCodePage(server: server))
    }

    /// The number of stored entries (0 when the tool never wrote the store).
    private func storedCount(_ store: ScratchStore) throws -> Int {
        FileManager.default.fileExists(atPath: store.path) ? try store.entries().count : 0
    }

    @Test(
        "no option: the code is shown, polls get authorization_pending until it is approved in the browser, then the sign-in is stored and refreshable"
    )
    func approved() async throws {
        let (control, polls) = try await prepared()
        let store = try ScratchStore()
        let (tool, page) = try start(store: store)
        defer { tool.stop() }
        #expect(try await polls.waitFor("authorization_pending"), "the tool polls before the approval")
        #expect(try TestBrowserRun.run(page) == 0)
        let status = try await BlockingWork.run { tool.finish() }
        let text = tool.stderr
        #expect(status == 0, "\(text)")
        let answers = try await polls.answers()
        #expect(answers.last == "token" && answers.filter { $0 == "token" }.count == 1, "\(answers)")
        #expect(answers.dropLast().allSatisfy { $0 == "authorization_pending" } && answers.count >= 2, "\(answers)")
        #expect(text.contains("No browser is opened here: there is no display"))
        #expect(text.contains("and enter the code"))
        #expect(text.contains("Signed in as alice"))
        #expect(
            !text.contains("not found") && !text.contains("xdg-open")
                && !text.contains("Open this URL in a browser if one"))
        let entry = try #require(try store.entries().first?.value)
        #expect(entry["id_token"]?.stringValue?.isEmpty == false, "the ID token is stored")

        // Refreshed like any other sign-in.
        try await control.expireAccessTokens()
        let token = try await ToolRunner.run(
            ["token", "--iap", try TestServer.current().iapConfig, "--format", "json"],
            environment: ["PORTAL_AUTH_STORE": store.path])
        #expect(token.status == 0, "\(token)")
        #expect(!token.stdout.isEmpty, "\(token)")
    }

    @Test(
        "slow_down from the server: the tool polls 5 s less often from then on (the server, which checks the gaps, sends no second one) and the sign-in completes"
    )
    func slowDown() async throws {
        let (_, polls) = try await prepared(["device_slow_down_polls": .integer(1)])
        let store = try ScratchStore()
        let (tool, page) = try start(store: store)
        defer { tool.stop() }
        #expect(tool.waitFor("checking every 6 s"), "\(tool.stderr)")
        #expect(try await polls.waitFor("authorization_pending"), "a poll after the slow_down, on time")
        #expect(try TestBrowserRun.run(page) == 0)
        let status = try await BlockingWork.run { tool.finish() }
        #expect(status == 0, "\(tool.stderr)")
        let answers = try await polls.answers()
        #expect(answers.first == "slow_down" && answers.last == "token", "\(answers)")
        #expect(
            answers.filter { $0 == "slow_down" }.count == 1,
            "a poll sooner than interval + 5 s would get another: \(answers)")
        let text = tool.stderr
        let slowed = try #require(text.range(of: "checking every 6 s"))
        let signedIn = try #require(text.range(of: "Signed in as alice"))
        #expect(slowed.lowerBound < signedIn.lowerBound)
    }

    @Test("denied on the verification page: exit 77, nothing stored")
    func denied() async throws {
        let (_, polls) = try await prepared()
        let store = try ScratchStore()
        let (tool, page) = try start(store: store)
        defer { tool.stop() }
        #expect(try await polls.waitFor("authorization_pending"))
        #expect(try TestBrowserRun.run(page, environment: ["PORTAL_AUTH_TEST_BROWSER_ACTION": "deny"]) == 0)
        let status = try await BlockingWork.run { tool.finish() }
        #expect(status == 77, "\(tool.stderr)")
        #expect(tool.stderr.contains("denied on the verification page (access_denied)"))
        let answers = try await polls.answers()
        #expect(answers.last == "access_denied" && !answers.contains("token"), "\(answers)")
        #expect(try storedCount(store) == 0)
    }

    @Test(
        "a short-lived code that nobody approves: exit 75 with what to do; the server then refuses the code on its page"
    )
    func expired() async throws {
        let (_, polls) = try await prepared(["device_code_seconds": .integer(3)])
        let store = try ScratchStore()
        let (tool, page) = try start(store: store)
        defer { tool.stop() }
        let status = try await BlockingWork.run { tool.finish() }
        #expect(status == 75, "\(tool.stderr)")
        #expect(
            tool.stderr.contains("the code expired before the sign-in was approved (expired_token)"), "\(tool.stderr)")
        let answers = try await polls.answers()
        #expect(answers.allSatisfy { ["authorization_pending", "expired_token"].contains($0) }, "\(answers)")
        #expect(try storedCount(store) == 0)

        let log = store.directory.appendingPathComponent("browser.log").path
        #expect(try TestBrowserRun.run(page, environment: ["PORTAL_AUTH_TEST_BROWSER_LOG": log]) == 2)
        #expect(
            try String(contentsOfFile: log, encoding: .utf8).contains(
                "device code refused at \(try TestServer.current().base)/o/device/: Expired user code"))
    }

    @Test(
        "Ctrl-C while waiting for the next poll ends the tool with 130 at once (the interval is 10 min), nothing stored"
    )
    func interrupted() async throws {
        let (_, polls) = try await prepared(["device_interval_seconds": .integer(600)])
        let store = try ScratchStore()
        let (tool, _) = try start(store: store, timeout: 3_600)
        defer { tool.stop() }
        tool.send(SIGINT)
        // The hang guard is far below the 600 s the tool would otherwise sleep before its first poll.
        let status = try await BlockingWork.run { tool.finish(timeout: .seconds(60)) }
        #expect(status == 130, "\(tool.stderr)")
        #expect(tool.stderr.contains("interrupted"))
        #expect(try await polls.answers().isEmpty, "no poll was made")
        #expect(try storedCount(store) == 0)
    }

    @Test("--timeout bounds the wait: no approval within it ends with 75 and the advice, while the code is still valid")
    func timeLimit() async throws {
        let (_, polls) = try await prepared()
        let store = try ScratchStore()
        let (tool, _) = try start(store: store, timeout: 4)
        defer { tool.stop() }
        let status = try await BlockingWork.run { tool.finish() }
        let text = tool.stderr
        #expect(status == 75, "\(text)")
        #expect(text.contains("for at most 4 s, --timeout; the code is valid for 30 min"), "\(text)")
        #expect(
            text.contains(
                "the sign-in was not approved within the time limit of 4 s (--timeout); the code was still valid"),
            "\(text)")
        #expect(
            !text.contains("timed out: the time limit of the whole operation passed"),
            "no failed request after the limit")
        #expect(try await polls.answers().allSatisfy { $0 == "authorization_pending" })
        #expect(try storedCount(store) == 0)
    }
}
