import Testing
@testable import PortalAuth
@testable import PortalAuthCore
@testable import PortalAuthStore

@Suite("Display text")
struct DisplayTextTests {
    @Test(
        "controls become visible escapes, line breaks and tabs one space, invisible marks escapes",
        arguments: [
            ("plain text", "plain text"),
            ("a\u{1B}[31mb", "a\\u{1B}[31mb"),
            ("bell\u{07}", "bell\\u{7}"),
            ("two\r\nlines\tand  tabs", "two lines and tabs"),
            ("\n leading and trailing \n", "leading and trailing"),
            ("c1\u{9B}31m", "c1\\u{9B}31m"),
            ("del\u{7F}", "del\\u{7F}"),
            ("rtl\u{202E}txt.exe", "rtl\\u{202E}txt.exe"),
            ("Zoë ✓ 東京", "Zoë ✓ 東京"),
        ])
    func neutralises(input: String, expected: String) {
        #expect(DisplayText.neutralised(input) == expected)
    }

    @Test("a limit shortens with an ellipsis")
    func limit() {
        #expect(DisplayText.neutralised(String(repeating: "x", count: 10), limit: 4) == "xxxx…")
        #expect(DisplayText.neutralised("abc", limit: 3) == "abc")
    }

    @Test("control characters are detected; the plain space is not one")
    func detects() {
        #expect(DisplayText.containsControlCharacters("a\nb"))
        #expect(DisplayText.containsControlCharacters("a\u{1B}"))
        #expect(!DisplayText.containsControlCharacters("alice smith"))
    }

    @Test(
        "tokens: visible ASCII only",
        arguments: [
            ("abc.DEF-123_~+/=", true), ("a b", true), ("abc\r\nX: 1", false), ("abc\u{1B}", false), ("tökén", false),
            (" abc", false),
        ])
    func tokens(token: String, usable: Bool) {
        #expect((TokenCharacters.problem(inToken: token) == nil) == usable)
    }

    @Test(
        "a path keeps its spaces and shows every control character, line breaks and tabs included, as an escape (issue 25)"
    )
    func path() {
        #expect(DisplayText.path("/home/a b/c.json") == "/home/a b/c.json")
        #expect(
            DisplayText.path("/tmp/x\u{1B}]0;t\u{07}\nportal-auth: error: forged\t.json")
                == #"/tmp/x\u{1B}]0;t\u{7}\u{A}portal-auth: error: forged\u{9}.json"#)
        #expect(!DisplayText.containsControlCharacters(DisplayText.path("a\r\n\u{85}\u{9B}\u{202E}b")))
    }
}
