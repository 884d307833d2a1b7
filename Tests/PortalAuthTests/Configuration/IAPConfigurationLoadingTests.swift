import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthCore
@testable import PortalAuthStore

@Suite("Loading IAP configuration files")
struct IAPConfigurationLoadingTests {
    /// Checks the text of a file as `IAPConfiguration.report(from:)` does after reading it.
    private func report(_ text: String) -> IAPConfigurationReport {
        IAPConfiguration.report(parsing: Data(text.utf8), file: URL(fileURLWithPath: "/tmp/test.json"))
    }

    // MARK: - Valid files

    @Test("loads the Entra fixture with every value")
    func entra() async throws {
        let url = FixtureFiles.iap("entra.json")
        let configuration = try await IAPConfiguration.configuration(from: url)
        let base = "https://login.microsoftonline.com/3f2504e0-4f89-41d3-9a0c-0305e82c3301/oauth2/v2.0/"
        #expect(configuration.authorizeURL.absoluteString == base + "authorize")
        #expect(configuration.tokenURL.absoluteString == base + "token")
        #expect(configuration.logoutURL.absoluteString == base + "logout")
        #expect(configuration.clientID == "6731de76-14a6-49ae-97bc-6eba6914391e")
        #expect(configuration.redirectURL.absoluteString == "http://localhost/callback")
        #expect(
            configuration.scopes == [
                "6731de76-14a6-49ae-97bc-6eba6914391e/.default", "offline_access", "openid", "profile",
            ])
        #expect(configuration.hostsBehindProxy == ["*.contoso.com", "gis.contoso.net:8443"])
        #expect(configuration.authorizationPromptType == .unspecified)
        #expect(configuration.sourceFile == url)
        #expect(configuration.isLoopbackRedirect)
        #expect(configuration.isMicrosoftEntra)
    }

    @Test("loads the generic OIDC fixture")
    func oidc() async throws {
        let configuration = try await IAPConfiguration.configuration(from: FixtureFiles.iap("oidc-generic.json"))
        #expect(configuration.authorizationPromptType == .selectAccount)
        #expect(configuration.hostsBehindProxy == ["gis.example.org", "*.tiles.example.org", "[2001:db8::10]:8443"])
        #expect(configuration.isMicrosoftEntra == false)
        #expect(configuration.canBeUsed(for: URL(string: "https://a.b.tiles.example.org/x")!))
        #expect(configuration.canBeUsed(for: URL(string: "https://[2001:db8::10]:8443/arcgis")!))
        #expect(!configuration.canBeUsed(for: URL(string: "https://[2001:db8::10]/arcgis")!))
    }

    @Test("ignores a UTF-8 byte-order mark, and reports positions as an editor shows them")
    func byteOrderMark() async throws {
        let plain = try await IAPConfiguration.configuration(from: FixtureFiles.iap("entra.json"))
        let withMark = try await IAPConfiguration.configuration(from: FixtureFiles.iap("entra-bom.json"))
        #expect(withMark.clientID == plain.clientID)
        var data = Data([0xEF, 0xBB, 0xBF])
        data.append(Data(#"{"scope": 1}"#.utf8))
        let report = IAPConfiguration.report(parsing: data, file: URL(fileURLWithPath: "/tmp/bom.json"))
        let scopeError = try #require(report.errors.first { $0.key == "scope" })
        #expect(scopeError.line == 1 && scopeError.column == 2)
    }

    @Test("a file whose size is exactly 1 MiB still loads")
    func exactlyOneMiB() async throws {
        let directory = try FixtureFiles.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var text = FixtureFiles.iapJSON()
        text += String(repeating: " ", count: ConfigurationError.maximumFileSize - text.utf8.count)
        let file = directory.appendingPathComponent("big.json")
        try Data(text.utf8).write(to: file)
        #expect(try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int == 1 << 20)
        let configuration = try await IAPConfiguration.configuration(from: file)
        #expect(configuration.hostsBehindProxy == ["*.contoso.com"])
    }

    // MARK: - Every semantic error message, with key and position

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let replacements: [String: String?]
        let extra: [String]
        let expected: [ConfigurationIssue]
        var testDescription: String { name }

        init(_ name: String, _ replacements: [String: String?], extra: [String] = [], _ expected: ConfigurationIssue...)
        {
            self.name = name
            self.replacements = replacements
            self.extra = extra
            self.expected = expected
        }
    }

    static let cases: [Case] = [
        Case(
            "missing key", ["token_url": nil],
            .init(
                message: "missing required key `token_url` (the identity provider's token endpoint URL)",
                key: "token_url", line: 1, column: 1)),
        Case(
            "client_id of the wrong type", ["client_id": "42"],
            .init(message: "`client_id` must be a string, found a number", key: "client_id", line: 5, column: 3)),
        Case(
            "empty client_id", ["client_id": #""""#],
            .init(
                message: "`client_id` must not be empty; use the application (client) ID from the app registration",
                key: "client_id", line: 5, column: 3)),
        Case(
            "client_id with a space", ["client_id": #""abc def""#],
            .init(
                message: #"`client_id` must not contain white space, found "abc def""#, key: "client_id", line: 5,
                column: 3)),
        Case(
            "unparsable URL", ["authorize_url": #""https://login example.com/a""#],
            .init(
                message: #"`authorize_url` is not a valid URL: "https://login example.com/a""#, key: "authorize_url",
                line: 2, column: 3)),
        Case(
            "empty URL", ["authorize_url": #""""#],
            .init(message: #"`authorize_url` is not a valid URL: """#, key: "authorize_url", line: 2, column: 3)),
        Case(
            "relative URL", ["token_url": #""/oauth2/token""#],
            .init(
                message:
                    #"`token_url` must be an absolute URL such as https://login.example.com/authorize, found "/oauth2/token""#,
                key: "token_url", line: 3, column: 3)),
        Case(
            "scheme that is not http(s)", ["logout_url": #""ftp://login.example.com/logout""#],
            .init(
                message: #"`logout_url` must be an https URL, found scheme "ftp" in "ftp://login.example.com/logout""#,
                key: "logout_url", line: 4, column: 3)),
        Case(
            "http on a host that is not loopback", ["authorize_url": #""http://login.example.com/authorize""#],
            .init(
                message:
                    #"`authorize_url` must use https (http is allowed only for loopback hosts: 127.0.0.0/8, [::1], localhost and *.localhost), found "http://login.example.com/authorize""#,
                key: "authorize_url", line: 2, column: 3)),
        Case(
            "URL without a host", ["token_url": #""https:///token""#],
            .init(
                message: #"`token_url` must name a host, found "https:///token""#, key: "token_url", line: 3, column: 3)
        ),
        Case(
            "credentials in a URL, which are not repeated",
            ["token_url": #""https://admin:s3cret@login.example.com/token""#],
            .init(
                message:
                    "`token_url` must not contain a user name or password; put credentials nowhere in the configuration",
                key: "token_url", line: 3, column: 3)),
        Case(
            "port out of range", ["token_url": #""https://login.example.com:70000/token""#],
            .init(message: "`token_url` has port 70000, which is outside 1-65535", key: "token_url", line: 3, column: 3)
        ),
        Case(
            "relative redirect URL", ["redirect_url": #""callback""#],
            .init(
                message: #"`redirect_url` must be an absolute URL such as http://localhost/callback, found "callback""#,
                key: "redirect_url", line: 6, column: 3)),
        Case(
            "null redirect URL", ["redirect_url": "null"],
            .init(message: "`redirect_url` must be a string, found null", key: "redirect_url", line: 6, column: 3)),
        Case(
            "scope as a string", ["scope": #""openid profile""#],
            .init(message: "`scope` must be an array of strings, found a string", key: "scope", line: 7, column: 3)),
        Case(
            "empty scope array", ["scope": "[]"],
            .init(
                message: #"`scope` must list at least one scope, e.g. ["openid", "offline_access"]"#, key: "scope",
                line: 7, column: 3)),
        Case(
            "scope entry of the wrong type", ["scope": #"["openid", 3]"#],
            .init(message: "`scope[1]` must be a string, found a number", key: "scope[1]", line: 7, column: 23)),
        Case(
            "scope entry with a space", ["scope": #"["openid profile"]"#],
            .init(
                message:
                    #"`scope[0]` must be a single scope without spaces, found "openid profile"; list each scope as its own entry"#,
                key: "scope[0]", line: 7, column: 13)),
        Case(
            "empty scope entry", ["scope": #"["openid", ""]"#],
            .init(message: "`scope[1]` must not be empty", key: "scope[1]", line: 7, column: 23)),
        Case(
            "hosts as an object", ["hosts_behind_proxy": "{}"],
            .init(
                message: "`hosts_behind_proxy` must be an array of strings, found an object", key: "hosts_behind_proxy",
                line: 8, column: 3)),
        Case(
            "empty hosts array", ["hosts_behind_proxy": "[]"],
            .init(
                message: #"`hosts_behind_proxy` must list at least one host pattern, e.g. ["*.contoso.com"]"#,
                key: "hosts_behind_proxy", line: 8, column: 3)),
        Case(
            "bad patterns, each named", ["hosts_behind_proxy": #"["*.contoso.com", "a*.b.com", "*.", true]"#],
            .init(
                message:
                    #"`hosts_behind_proxy[1]` is not a valid host pattern: "a*.b.com": a wildcard is allowed only alone ("*") or as the whole first label ("*.contoso.com")"#,
                key: "hosts_behind_proxy[1]", line: 8, column: 43),
            .init(
                message:
                    #"`hosts_behind_proxy[2]` is not a valid host pattern: "*.": "*." names no domain; write "*.contoso.com" or "*""#,
                key: "hosts_behind_proxy[2]", line: 8, column: 55),
            .init(
                message: "`hosts_behind_proxy[3]` must be a string, found a boolean", key: "hosts_behind_proxy[3]",
                line: 8, column: 61)),
        Case(
            "unknown prompt type", ["authorization_prompt_type": #""Login""#],
            .init(
                message:
                    #"`authorization_prompt_type` has the unknown value "Login"; allowed values: "", "none", "login", "consent", "select_account""#,
                key: "authorization_prompt_type", line: 9, column: 3)),
        Case(
            "prompt type of the wrong type", ["authorization_prompt_type": "true"],
            .init(
                message: "`authorization_prompt_type` must be a string, found a boolean",
                key: "authorization_prompt_type", line: 9, column: 3)),
        Case(
            "missing key with a near miss present", ["hosts_behind_proxy": nil],
            extra: [#"  "host_behind_proxy": ["*.contoso.com"]"#],
            .init(
                message:
                    #"missing required key `hosts_behind_proxy` (an array of host patterns, e.g. ["*.contoso.com"]); is `host_behind_proxy` a misspelling of it?"#,
                key: "hosts_behind_proxy", line: 1, column: 1)),
    ]

    @Test("reports the message, key, line and column", arguments: cases)
    func semanticError(_ testCase: Case) throws {
        let report = report(FixtureFiles.iapJSON(replacing: testCase.replacements, extra: testCase.extra))
        #expect(report.errors == testCase.expected)
        #expect(report.configuration == nil)
        let error = try #require(report.error)
        #expect(error.kind == .invalidConfiguration)
        #expect(error.category == .invalidContent)
    }

    @Test("reports every problem in a file at once, in document order")
    func everyProblemAtOnce() async {
        let report = await IAPConfiguration.report(from: FixtureFiles.iap("many-problems.json"))
        #expect(report.errors.map(\.key) == ["logout_url", "client_id", "scope[1]", "hosts_behind_proxy[1]"])
        #expect(report.errors.map(\.line) == [1, 4, 8, 14])
        #expect(report.warnings.isEmpty)
    }

    @Test(
        "a root that is not an object",
        arguments: [("[]", "an array"), (#""text""#, "a string"), ("3", "a number"), ("null", "null")])
    func rootNotAnObject(text: String, found: String) {
        let report = report(text)
        #expect(
            report.errors == [
                ConfigurationIssue(
                    message:
                        "the configuration must be a JSON object with the keys authorize_url, token_url, logout_url, client_id, redirect_url, scope, hosts_behind_proxy, found \(found)",
                    key: nil, line: 1, column: 1)
            ])
    }

    @Test("an empty object lists all seven missing keys")
    func emptyObject() {
        let report = report("{}")
        #expect(
            report.errors.map(\.key) == [
                "authorize_url", "token_url", "logout_url", "client_id", "redirect_url", "scope", "hosts_behind_proxy",
            ])
    }

    // MARK: - Warnings

    static let warningCases: [(extraLine: String, message: String)] = [
        (
            #"  "authorisation_prompt_type": "login""#,
            "unknown key `authorisation_prompt_type` is ignored; did you mean `authorization_prompt_type`?"
        ),
        (#"  "Client_Id": "x""#, "unknown key `Client_Id` is ignored; did you mean `client_id`?"),
        (
            #"  "hosts-behind-proxy": []"#,
            "unknown key `hosts-behind-proxy` is ignored; did you mean `hosts_behind_proxy`?"
        ),
        (#"  "scopes": ["openid"]"#, "unknown key `scopes` is ignored; did you mean `scope`?"),
        (
            #"  "comment": "for the GIS team""#,
            "unknown key `comment` is ignored; the known keys are authorize_url, token_url, logout_url, client_id, redirect_url, scope, hosts_behind_proxy, authorization_prompt_type"
        ),
    ]

    @Test("an unknown key is a warning that suggests the nearest known key", arguments: warningCases)
    func unknownKey(extraLine: String, message: String) throws {
        let report = report(FixtureFiles.iapJSON(extra: [extraLine]))
        #expect(report.isValid)
        #expect(report.errors.isEmpty)
        let warning = try #require(report.warnings.first)
        #expect(report.warnings.count == 1)
        #expect(warning.message == message)
        #expect(warning.line == 10 && warning.column == 3)
    }

    static let redirects: [(redirect: String, isLoopback: Bool)] = [
        ("http://127.0.0.1/callback", true),
        ("http://127.0.0.1:8400/callback", true),
        ("http://127.9.8.7/cb", true),
        ("http://localhost/callback", true),
        ("http://LOCALHOST:1234", true),
        ("http://[::1]:8400/cb", true),
        ("https://127.0.0.1/callback", false),
        ("https://app.example.com/callback", false),
        ("http://128.0.0.1/callback", false),
        ("msauth.com.contoso.maps://auth", false),
        ("msauth://auth", false),
    ]

    @Test("a redirect that is neither loopback nor a custom scheme loads, with a warning", arguments: redirects)
    func redirect(redirect: String, isLoopback: Bool) throws {
        let report = report(FixtureFiles.iapJSON(replacing: ["redirect_url": "\"\(redirect)\""]))
        let configuration = try #require(report.configuration)
        #expect(configuration.isLoopbackRedirect == isLoopback)
        if isLoopback || configuration.isCustomSchemeRedirect {
            #expect(report.warnings.isEmpty)
            #expect(configuration.isCustomSchemeRedirect == redirect.hasPrefix("msauth"))
        } else {
            #expect(
                report.warnings == [
                    ConfigurationIssue(
                        message:
                            "`redirect_url` \"\(redirect)\" is neither a loopback URL (http://127.0.0.1, http://[::1], http://localhost or a name under localhost, any port and path) nor a custom-scheme URL (my-app://auth); the file is valid, but portal-auth cannot receive the sign-in redirect with it on this platform",
                        key: "redirect_url", line: 6, column: 3)
                ])
        }
    }

    @Test("http endpoints are allowed on loopback hosts")
    func loopbackEndpoints() throws {
        let report = report(
            FixtureFiles.iapJSON(replacing: [
                "authorize_url": #""http://127.0.0.1:9000/authorize""#,
                "token_url": #""http://localhost:9000/token""#,
                "logout_url": #""http://[::1]:9000/logout""#,
            ]))
        #expect(report.errors.isEmpty)
        #expect(try #require(report.configuration).tokenURL.absoluteString == "http://localhost:9000/token")
    }

    // MARK: - Files that cannot be read or parsed

    static let fileFailures:
        [(
            fixture: String, kind: ConfigurationError.Kind, category: ErrorCategory, message: String, line: Int?,
            column: Int?
        )] = [
            (
                "empty.json", .empty, .invalidContent,
                "the file is empty; it must hold a JSON object with the keys authorize_url, token_url, logout_url, client_id, redirect_url, scope, hosts_behind_proxy",
                nil, nil
            ),
            (
                "non-utf8.json", .notUTF8, .invalidContent,
                "the file is not UTF-8 text: byte 0xE9 at byte offset 27 is invalid; save the file as UTF-8", 2, 26
            ),
            (
                "syntax-error.json", .syntax, .invalidContent,
                #"JSON syntax error: '}' expected near '"redirect_url"'"#, 6, 16
            ),
            (
                "duplicate-key.json", .syntax, .invalidContent,
                #"JSON syntax error: duplicate object key near '"client_id"'; each key may appear only once"#, 7, 13
            ),
        ]

    @Test("fixtures that cannot be parsed get their own error", arguments: fileFailures)
    func fileFailure(
        fixture: String, kind: ConfigurationError.Kind, category: ErrorCategory, message: String, line: Int?,
        column: Int?
    ) async throws {
        let url = FixtureFiles.iap(fixture)
        let report = await IAPConfiguration.report(from: url)
        let error = try #require(report.error)
        #expect(error.kind == kind)
        #expect(error.category == category)
        #expect(error.file == url)
        #expect(error.issues == [ConfigurationIssue(message: message, key: nil, line: line, column: column)])
        #expect(error.description.hasPrefix("configuration file \(url.path): "))
        await #expect(throws: error) { try await IAPConfiguration.configuration(from: url) }
    }

    @Test("a file of white space only is empty")
    func whitespaceOnly() {
        #expect(report(" \n\t\r\n").error?.kind == .empty)
    }

    @Test("a missing file")
    func missingFile() async throws {
        let url = URL(fileURLWithPath: "/nonexistent/portal-auth/iap.json")
        let error = try #require(await IAPConfiguration.report(from: url).error)
        #expect(error.kind == .fileNotFound)
        #expect(error.category == .unreadableInput)
        #expect(
            error.description
                == "configuration file /nonexistent/portal-auth/iap.json: the file does not exist; check the path (a relative path is resolved from the current directory)"
        )
    }

    @Test("a directory")
    func directory() async throws {
        let error = try #require(await IAPConfiguration.report(from: FixtureFiles.root).error)
        #expect(error.kind == .isDirectory)
        #expect(error.category == .unreadableInput)
        #expect(
            error.issues.first?.message == "this is a directory; give the path of the JSON configuration file itself")
    }

    @Test("a file over 1 MiB", arguments: [false, true])
    func tooLarge(throughFIFO: Bool) async throws {
        let directory = try FixtureFiles.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var text = FixtureFiles.iapJSON()
        text += String(repeating: " ", count: ConfigurationError.maximumFileSize + 1 - text.utf8.count)
        let file = directory.appendingPathComponent("big.json")
        if throughFIFO {
            // A FIFO has no size up front: the limit applies while reading.
            #expect(mkfifo(file.path, 0o600) == 0)
            let payload = Data(text.utf8)
            BlockingWork.detach { try? payload.write(to: file) }
        } else {
            try Data(text.utf8).write(to: file)
        }
        let error = try #require(await IAPConfiguration.report(from: file).error)
        #expect(error.kind == .tooLarge)
        #expect(error.category == .invalidContent)
        #expect(
            error.issues.first?.message
                == "the file is larger than 1048576 bytes (1 MiB), the limit for a configuration file; check that this is the right file"
        )
    }

    @Test("an unreadable file", .enabled(if: geteuid() != 0, "root can read any file"))
    func unreadable() async throws {
        let directory = try FixtureFiles.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("locked.json")
        try Data(FixtureFiles.iapJSON().utf8).write(to: file)
        #expect(chmod(file.path, 0) == 0)
        let error = try #require(await IAPConfiguration.report(from: file).error)
        #expect(error.kind == .unreadable)
        #expect(error.category == .unreadableInput)
        #expect(
            error.issues.first?.message
                == "the file cannot be read (permission denied); check that it is readable by this user")
    }

    @Test(
        "each failed system call maps to its own error",
        arguments: [
            (
                ENOENT, ConfigurationError.Kind.fileNotFound,
                "the file does not exist; check the path (a relative path is resolved from the current directory)"
            ),
            (
                ENOTDIR, .fileNotFound,
                "the file does not exist; check the path (a relative path is resolved from the current directory)"
            ),
            (EISDIR, .isDirectory, "this is a directory; give the path of the JSON configuration file itself"),
            (
                EACCES, .unreadable,
                "the file cannot be read (permission denied); check that it is readable by this user"
            ),
            (EPERM, .unreadable, "the file cannot be read (permission denied); check that it is readable by this user"),
            (EIO, .unreadable, "the file cannot be read (Input/output error); check that it is readable by this user"),
        ])
    func systemErrors(code: Int32, kind: ConfigurationError.Kind, message: String) {
        let file = URL(fileURLWithPath: "/srv/iap.json")
        let error = ConfigurationFileReader.failure(file, SystemError(call: "open", errno: code))
        #expect(error.kind == kind)
        #expect(error.category == .unreadableInput)
        #expect(error.issues.map(\.message) == [message])
        #expect(error.description == "configuration file /srv/iap.json: \(message)")
    }

    @Test("a URL that is not a file")
    func notAFile() async throws {
        let url = try #require(URL(string: "https://example.com/iap.json"))
        let error = try #require(await IAPConfiguration.report(from: url).error)
        #expect(error.kind == .notAFileURL)
        #expect(error.category == .usage)
        #expect(
            error.description
                == "https://example.com/iap.json is not a file URL; configurations are loaded from local files only (use URL(fileURLWithPath:))"
        )
    }

    // MARK: - Robustness

    @Test(
        "odd inputs never crash and always give a configuration or an error",
        arguments: [
            "[", "]", "{", "{\"a\":", "\"", "\\", "nul", "1e999999", "-", "{\"scope\": [[[[]]]]}",
            String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000),
            "{\"hosts_behind_proxy\": [\"\u{0}\"]}", "{\"client_id\": \"\\u0000\"}", "{\"\": 1}",
            "{\"scope\": {\"a\": [1, {\"b\": 2}]}}",
        ])
    func oddInputs(text: String) {
        let report = report(text)
        #expect(report.isValid == (report.error == nil))
        #expect(!report.isValid)
    }

    @Test("mutated copies of a valid file never crash")
    func mutations() throws {
        let original = Array(try Data(contentsOf: FixtureFiles.iap("entra.json")))
        var generator = SplitMix64(seed: 0x5EED)
        var outcomes = (valid: 0, invalid: 0)
        for _ in 0..<400 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let index = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes[index] = UInt8.random(in: 0...255, using: &generator)
                case 1: bytes.remove(at: index)
                default: bytes.insert(UInt8.random(in: 0...255, using: &generator), at: index)
                }
            }
            let report = IAPConfiguration.report(parsing: Data(bytes), file: URL(fileURLWithPath: "/tmp/m.json"))
            #expect(report.isValid == (report.error == nil))
            #expect(report.errors.allSatisfy { !$0.message.isEmpty })
            if report.isValid { outcomes.valid += 1 } else { outcomes.invalid += 1 }
        }
        #expect(outcomes.invalid > 0)
    }
}
