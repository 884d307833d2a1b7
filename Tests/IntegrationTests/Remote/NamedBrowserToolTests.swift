import Foundation
import Testing
@testable import PortalAuth

/// The built tool on a machine without a display and without a terminal (issue 34, issue 35 item 7): `$BROWSER` is a
/// browser the person sees, a failing one hands over to the remote path at once, and every piece of advice leads to a
/// command that can work here (no loop between `--device-code` and `--no-browser`).
@Suite("Named browsers and advice without a terminal", .serialized, .enabled(if: TestServer.isConfigured))
struct NamedBrowserToolTests {
    /// The options that choose a sign-in path, which advice may suggest.
    static let pathOptions = ["--no-browser", "--device-code", "--browser-command", "--redirect-url"]

    /// Runs the tool without a display, a terminal or `BROWSER` (plus `environment`) and returns its status and stderr.
    private func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> (
        status: Int32, stderr: String
    ) {
        let tool = try HeadlessTool(arguments, environment: environment)
        defer { tool.stop() }
        let status = try await BlockingWork.run { tool.finish() }
        return (status, tool.stderr)
    }

    /// The path options `text` suggests.
    private func suggested(in text: String) -> Set<String> {
        Set(Self.pathOptions.filter { text.contains($0) })
    }

    @Test(
        "BROWSER set, no DISPLAY, no terminal: the IAP sign-in goes through that browser (no device code, no refusal)")
    func browserWithoutDisplay() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        let result = try await run(
            ["iap", "login", "--config", server.iapConfig, "--timeout", "600"],
            environment: ["PORTAL_AUTH_STORE": store.path, "BROWSER": server.browser])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            !result.stderr.contains("No browser is opened here") && !result.stderr.contains("enter the code"),
            "\(result.stderr)")
        #expect(
            result.stderr.contains(
                "an error page from the identity provider, the client ID or this redirect URL is not registered"),
            "the hint about an error page is given beside the URL: \(result.stderr)")
        #expect(try store.entries().count == 1)
    }

    @Test(
        "a failing BROWSER, no DISPLAY, no terminal, a portal (no device code): exit 64 at once with advice that can work here"
    )
    func failingBrowserPortal() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        // --timeout far above the hang guard: a wait for the browser would fail the test.
        let result = try await run(
            ["login", "--portal", server.portal, "--client-id", server.clientID, "--timeout", "600"],
            environment: ["PORTAL_AUTH_STORE": store.path, "BROWSER": "/bin/false"])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(
            result.stderr.contains("the browser could not be started (the browser command exited with status 1)"),
            "\(result.stderr)")
        #expect(!result.stderr.contains("--device-code"), "portals have no device code: \(result.stderr)")
        #expect(result.stderr.contains("ssh -t") && result.stderr.contains("--browser-command"), "\(result.stderr)")
    }

    @Test("the advice chain of a portal without a terminal never comes back to a refused path")
    func portalAdviceChain() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        let base = ["login", "--portal", server.portal, "--client-id", server.clientID, "--timeout", "30"]
        let environment = ["PORTAL_AUTH_STORE": store.path]
        let first = try await run(base, environment: environment)
        #expect(first.status == 64, "\(first.stderr)")
        #expect(!first.stderr.contains("--device-code"), "\(first.stderr)")
        #expect(first.stderr.contains("ssh -t"), "\(first.stderr)")
        // From --device-code (the loop of issue 35: --device-code → --no-browser → --device-code), each path option a
        // refusal suggests, followed in turn: none suggests the device code again, nor a path refused before
        // unless it says the terminal that path needs.
        var refused: Set<String> = []
        var next = suggested(in: first.stderr).union(["--device-code"]).subtracting(["--browser-command"])
        for _ in 0..<Self.pathOptions.count where !next.isEmpty {
            let option = next.removeFirst()
            let arguments = option == "--redirect-url" ? base + [option, "urn:ietf:wg:oauth:2.0:oob"] : base + [option]
            let result = try await run(arguments, environment: environment)
            #expect(result.status == 64, "\(option): \(result.stderr)")
            refused.insert(option)
            let advised = suggested(in: result.stderr).subtracting(["--browser-command", option])
            #expect(
                advised.isDisjoint(with: refused) || result.stderr.contains("on a terminal"),
                "\(option) leads back to \(advised.intersection(refused)) without a terminal: \(result.stderr)")
            #expect(!advised.contains("--device-code") || option == "--device-code", "\(option): \(result.stderr)")
            next.formUnion(advised.subtracting(refused))
        }
        #expect(refused.isSuperset(of: ["--device-code", "--no-browser", "--redirect-url"]), "\(refused)")
    }

    @Test(
        "the advice chain of an IAP without a terminal: --no-browser refused, then the device code it suggests is shown"
    )
    func iapAdviceChain() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        let environment = ["PORTAL_AUTH_STORE": store.path]
        let pasteBack = try await run(
            ["iap", "login", "--config", server.iapConfig, "--no-browser", "--timeout", "30"], environment: environment)
        #expect(pasteBack.status == 64, "\(pasteBack.stderr)")
        #expect(pasteBack.stderr.contains("--device-code"), "the provider may have one: \(pasteBack.stderr)")
        // The suggestion leads somewhere: a code is shown (the wait for its approval is cut short by the tool's
        // time limit, and then the advice is about time, not about another path).
        let deviceCode = try await run(
            ["iap", "login", "--config", server.iapConfig, "--device-code", "--timeout", "3"], environment: environment)
        #expect(deviceCode.stderr.contains("enter the code"), "\(deviceCode.stderr)")
        #expect(deviceCode.status == 75, "\(deviceCode.stderr)")
        #expect(!deviceCode.stderr.contains("--no-browser"), "\(deviceCode.stderr)")
    }
}
