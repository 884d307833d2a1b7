import Dispatch
import Foundation
import Testing

/// An empty password typed at a prompt is asked again, never sent (`generate-token` on a real pseudo-terminal;
/// the portal is never reached, so no server is needed).
@Suite("an empty password at the prompt", .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script")))
struct EmptyPasswordPromptTests {
    @Test("Enter alone explains and asks again; Ctrl-C then stops with 130")
    func askedAgain() async throws {
        let terminal = try TerminalPromptTests.Terminal(
            ["generate-token", "--portal", "http://127.0.0.1:9/portal", "--username", "alice"], environment: [:])
        defer { terminal.stop() }
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(
                    with: Result {
                        #expect(terminal.waitFor("Password for alice at 127.0.0.1: "))
                        try terminal.press("\r")
                        #expect(terminal.waitFor("The password is empty; type it"))
                        #expect(terminal.waitFor("Password for alice at 127.0.0.1: "), "asked again")
                        try terminal.press("\u{03}")
                        return terminal.finish()
                    })
            }
        }
        #expect(status == 130, "\(terminal.shown)")
        #expect(!terminal.shown.contains("127.0.0.1:9"), "nothing was sent to the portal")
    }
}
