import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthCore
@testable import PortalAuthStore

@Suite("Key suggestions and key positions")
struct ConfigurationSupportTests {
    // MARK: - Nearest key

    static let suggestions: [(key: String, expected: String?)] = [
        ("hosts_behind_proxies", "hosts_behind_proxy"),
        ("host_behind_proxy", "hosts_behind_proxy"),
        ("hostsBehindProxy", "hosts_behind_proxy"),
        ("HOSTS_BEHIND_PROXY", "hosts_behind_proxy"),
        ("clientid", "client_id"),
        ("client-id", "client_id"),
        ("scopes", "scope"),
        ("redirect_uri", "redirect_url"),
        ("authorization_url", "authorize_url"),
        ("tokne_url", "token_url"),
        ("logout", nil),
        ("comment", nil),
        ("x", nil),
        ("", nil),
    ]

    @Test("suggests the nearest known key when it is close", arguments: suggestions)
    func suggestion(key: String, expected: String?) {
        #expect(KeySuggester.nearest(to: key, among: IAPConfigurationKey.allCases.map(\.rawValue)) == expected)
    }

    @Test(
        "edit distance",
        arguments: [
            ("", "", 0), ("abc", "", 3), ("", "ab", 2), ("kitten", "sitting", 3), ("tokne", "token", 1),
            ("scope", "scopes", 1), ("ab", "ba", 1),
        ])
    func distance(lhs: String, rhs: String, expected: Int) {
        #expect(KeySuggester.editDistance(lhs, rhs) == expected)
        #expect(KeySuggester.editDistance(rhs, lhs) == expected)
    }

    // MARK: - Positions

    @Test("locates keys, array entries and nested members")
    func locations() {
        let text = """
            {
              "a": 1,
              "list": [ "x",
                {"inner": true}, [2] ],
              "é\\u00e9": "ü", "b": {"c": null}
            }
            """
        let locator = JSONKeyLocator(scanning: Data(text.utf8))
        let expected: [(String, Int, Int)] = [
            ("", 1, 1), ("a", 2, 3), ("list", 3, 3), ("list[0]", 3, 13), ("list[1]", 4, 5), ("list[1].inner", 4, 6),
            ("list[2]", 4, 22), ("list[2][0]", 4, 23), ("éé", 5, 3), ("b", 5, 19), ("b.c", 5, 25),
        ]
        for (path, line, column) in expected {
            let location = locator.location(of: path)
            #expect(location?.line == line && location?.column == column, "\(path): \(String(describing: location))")
        }
    }

    @Test("falls back to the nearest located ancestor")
    func fallback() {
        let locator = JSONKeyLocator(scanning: Data(#"{"scope": ["a"]}"#.utf8))
        #expect(locator.location(of: "scope[7]") == .init(line: 1, column: 2))
        #expect(locator.location(of: "missing") == .init(line: 1, column: 1))
        #expect(JSONKeyLocator.parent(of: "a.b[2]") == "a.b")
        #expect(JSONKeyLocator.parent(of: "a.b") == "a")
        #expect(JSONKeyLocator.parent(of: "a") == "")
    }

    @Test("strings with brackets, commas and escaped quotes do not confuse it")
    func trickyStrings() {
        let text = #"{"a": "[,{\"}]", "b": ["\\", "x"]}"#
        let locator = JSONKeyLocator(scanning: Data(text.utf8))
        #expect(locator.location(of: "b") == .init(line: 1, column: 18))
        #expect(locator.location(of: "b[1]") == .init(line: 1, column: 30))
    }

    // MARK: - Issues and errors

    @Test("an issue reads with its position")
    func issueDescription() {
        #expect(ConfigurationIssue(message: "m", key: "k", line: 3, column: 5).description == "line 3, column 5: m")
        #expect(ConfigurationIssue(message: "m", key: "k", line: 3).description == "line 3: m")
        #expect(ConfigurationIssue(message: "m").description == "m")
    }

    @Test("an invalid file's error lists every problem under the file's name")
    func invalidDescription() {
        let report = IAPConfiguration.report(parsing: Data("{}".utf8), file: URL(fileURLWithPath: "/etc/iap.json"))
        let lines = report.error?.description.split(separator: "\n") ?? []
        #expect(lines.first == "configuration file /etc/iap.json is invalid (7 problems):")
        #expect(
            lines.dropFirst().first
                == "  line 1, column 1: missing required key `authorize_url` (the identity provider's authorization endpoint URL)"
        )
        #expect(lines.count == 8)
    }

    @Test("kinds print their names")
    func kinds() {
        #expect(ConfigurationError.Kind.fileNotFound.description == "fileNotFound")
        #expect(ConfigurationError.Kind.syntax != .invalidConfiguration)
    }
}
