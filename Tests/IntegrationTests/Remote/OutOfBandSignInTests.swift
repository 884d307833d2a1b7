import Foundation
import Testing
@testable import PortalAuth

/// `portal-auth login --portal … --redirect-url urn:ietf:wg:oauth:2.0:oob` on a terminal without a display: the
/// test server's portal face, whose client registration lists the out-of-band redirect, ends the sign-in on its
/// approval page showing a code; the headless browser (on "another machine") copies it and it is pasted back.
@Suite("Out-of-band code sign-in to a portal", .serialized, .enabled(if: TestServer.isConfigured))
struct OutOfBandSignInTests {
    @Test("the portal's approval page shows the code; a wrong paste is explained and asked again; the code signs in")
    func outOfBand() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        let codeFile = store.directory.appendingPathComponent("code").path
        let tool = try TerminalTool(
            [
                "login", "--portal", server.portal, "--client-id", server.clientID,
                "--redirect-url", "urn:ietf:wg:oauth:2.0:oob", "--timeout", "120",
            ],
            environment: ["PORTAL_AUTH_STORE": store.path])

        var (text, url) = try tool.authorizationURL(
            until: "Paste the code here and press Enter:", portal: server.portal)
        let items = URLComponents(string: url)?.queryItems ?? []
        #expect(items.first { $0.name == "redirect_uri" }?.value == "urn:ietf:wg:oauth:2.0:oob")
        tool.type("a b")
        text += tool.read(until: "without spaces")
        text += tool.read(until: "Paste the code here and press Enter:")

        let browser = try TestBrowserRun.run(
            url,
            environment: [
                "PORTAL_AUTH_TEST_BROWSER_REMOTE": "1", "PORTAL_AUTH_TEST_BROWSER_CODE_FILE": codeFile,
            ])
        #expect(browser == 0)
        let code = try String(contentsOfFile: codeFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!code.isEmpty)
        tool.type(code)
        let (status, rest) = try await tool.finish()
        text += rest
        #expect(status == 0, "\(text)")
        #expect(text.contains("Open this URL in a browser on any machine and sign in; the page then shows a code:"))
        #expect(text.contains("it does not look like a code"), "\(text)")
        let lines = text.components(separatedBy: CharacterSet.newlines).map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(
            lines.filter { $0 == "Paste the code here and press Enter:" }.count == 2,
            "asked again for the code, on its own line")
        #expect(!text.contains("Paste that address"), "a code is asked for, not an address")
        #expect(text.contains("Signed in to \(server.portal) as alice"), "\(text)")
        let entries = try store.entries()
        #expect(entries.count == 1 && entries.first?.value["kind"]?.stringValue == "oauth-user", "\(entries.keys)")
        #expect(
            entries.first?.value["refresh_token"]?.stringValue?.isEmpty == false, "refreshable like any other sign-in")
    }
}
