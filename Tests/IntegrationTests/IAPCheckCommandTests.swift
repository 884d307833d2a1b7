import Foundation
import PortalAuth
import Testing

@Suite("portal-auth iap check, end to end")
struct IAPCheckCommandTests {
    /// `Fixtures/iap`, found from this source file.
    private static let fixtures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/iap")

    private static func fixture(_ name: String) -> String {
        fixtures.appendingPathComponent(name).path
    }

    /// A new empty directory under the temporary directory; the caller removes it.
    private static func scratchDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "portal-auth-it-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// Runs `iap check --config <fixture>` followed by `extra`.
    private func check(_ name: String, _ extra: [String] = []) async throws -> ToolRunner.Result {
        let result = try await ToolRunner.run(["iap", "check", "--config", Self.fixture(name)] + extra)
        #expect(!result.timedOut)
        return result
    }

    /// Parses stdout as the one JSON object `--format json` prints, checking its shape.
    private func jsonReport(_ result: ToolRunner.Result) throws -> JSONObject {
        let object = try #require(try JSONValue.parse(result.stdout).objectValue, "\(result)")
        #expect(object.keys == ["schema_version", "valid", "file", "errors", "warnings", "configuration", "urls"])
        for issue in (object["errors"]?.arrayValue ?? []) + (object["warnings"]?.arrayValue ?? []) {
            #expect(issue.objectValue?.keys == ["message", "key", "line", "column"])
        }
        #expect(result.stderr.isEmpty)
        return object
    }

    // MARK: - Valid files

    @Test("a valid Entra file: exit 0, the configuration on stdout, nothing on stderr")
    func valid() async throws {
        let file = Self.fixture("entra.json")
        let result = try await check("entra.json")
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.isEmpty)
        #expect(
            result.stdoutLines == [
                "\(file): valid IAP configuration",
                "  authorize_url              https://login.microsoftonline.com/3f2504e0-4f89-41d3-9a0c-0305e82c3301/oauth2/v2.0/authorize",
                "  token_url                  https://login.microsoftonline.com/3f2504e0-4f89-41d3-9a0c-0305e82c3301/oauth2/v2.0/token",
                "  logout_url                 https://login.microsoftonline.com/3f2504e0-4f89-41d3-9a0c-0305e82c3301/oauth2/v2.0/logout",
                "  client_id                  6731de76-14a6-49ae-97bc-6eba6914391e",
                "  redirect_url               http://localhost/callback (loopback: usable for sign-in here)",
                "  scope                      6731de76-14a6-49ae-97bc-6eba6914391e/.default offline_access openid profile",
                "  hosts_behind_proxy         *.contoso.com gis.contoso.net:8443",
                "  authorization_prompt_type  \"\" (unspecified)",
            ])
    }

    @Test("--url says for each URL whether the configuration can be used; one not covered exits 1, all covered 0")
    func urls() async throws {
        let result = try await check(
            "entra.json",
            [
                "--url", "https://maps.contoso.com/portal/home", "--url", "https://evilcontoso.com/",
                "--url", "https://gis.contoso.net:8443/arcgis", "--url", "https://gis.contoso.net/arcgis",
            ])
        #expect(result.status == 1, "\(result)")
        let covered = try await check(
            "entra.json",
            ["--url", "https://maps.contoso.com/portal/home", "--url", "https://gis.contoso.net:8443/arcgis"])
        #expect(covered.status == 0, "\(covered)")
        #expect(
            Array(result.stdoutLines.suffix(4)) == [
                "https://maps.contoso.com/portal/home: can be used",
                "https://evilcontoso.com/: cannot be used (its host matches no entry of hosts_behind_proxy)",
                "https://gis.contoso.net:8443/arcgis: can be used",
                "https://gis.contoso.net/arcgis: cannot be used (its host matches no entry of hosts_behind_proxy)",
            ])
    }

    @Test("a relative --config path is resolved from the working directory and printed as given")
    func relativePath() async throws {
        let result = try await ToolRunner.run(
            ["iap", "check", "--config", "oidc-generic.json"], directory: Self.fixtures)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines.first == "oidc-generic.json: valid IAP configuration")
        #expect(result.stdoutLines.last == "  authorization_prompt_type  select_account")
    }

    static let warnings: [(fixture: String, warning: String)] = [
        (
            "unknown-key-typo.json",
            ":17:3: warning: unknown key `authorisation_prompt_type` is ignored; did you mean `authorization_prompt_type`?"
        ),
        (
            "remote-redirect.json",
            ":6:3: warning: `redirect_url` \"https://maps.contoso.com/signin-callback\" is neither a loopback URL (http://127.0.0.1, http://[::1], http://localhost or a name under localhost, any port and path) nor a custom-scheme URL (my-app://auth); the file is valid, but portal-auth cannot receive the sign-in redirect with it on this platform"
        ),
    ]

    @Test("warnings go to stderr and do not fail the check", arguments: warnings)
    func warning(fixture: String, warning: String) async throws {
        let result = try await check(fixture)
        #expect(result.status == 0, "\(result)")
        #expect(result.stderrLines == [Self.fixture(fixture) + warning])
        #expect(result.stdoutLines.first == "\(Self.fixture(fixture)): valid IAP configuration (1 warning)")
    }

    @Test("a redirect that is neither loopback nor a custom scheme is marked unusable on this platform")
    func nonLoopback() async throws {
        let result = try await check("remote-redirect.json")
        #expect(
            result.stdout.contains(
                "  redirect_url               https://maps.contoso.com/signin-callback (neither loopback nor a custom scheme: cannot be used to sign in on this platform)\n"
            ))
        let json = try jsonReport(try await check("remote-redirect.json", ["--format", "json"]))
        #expect(json["valid"] == .bool(true))
        #expect(json["configuration"]?["loopback_redirect"] == .bool(false))
        #expect(json["configuration"]?["custom_scheme_redirect"] == .bool(false))
        #expect(json["warnings"]?.arrayValue?.first?["key"] == .string("redirect_url"))
    }

    @Test("a custom-scheme redirect is usable on a desktop (once registered), and by pasting without one; no warning")
    func customScheme() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pa-it-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let desktop = [
            "DISPLAY": ":99", "WAYLAND_DISPLAY": "", "XDG_CURRENT_DESKTOP": "", "HOME": folder.path,
            "XDG_DATA_HOME": folder.appendingPathComponent("data").path,
            "XDG_CONFIG_HOME": folder.appendingPathComponent("config").path,
        ]
        let prefix = "  redirect_url               msauth.com.contoso.maps://auth "
        let onDesktop = try await ToolRunner.run(
            ["iap", "check", "--config", Self.fixture("non-loopback-redirect.json")], environment: desktop)
        #expect(onDesktop.status == 0, "\(onDesktop)")
        #expect(onDesktop.stderr.isEmpty, "no warning for a custom scheme")
        #expect(
            onDesktop.stdout.contains(
                prefix
                    + "(custom scheme: usable for sign-in on this desktop once registered (portal-auth register-scheme --scheme msauth.com.contoso.maps))\n"
            ), "\(onDesktop)")
        #expect(!onDesktop.stdout.contains("cannot be used"))

        let register = try await ToolRunner.run(
            ["register-scheme", "--config", Self.fixture("non-loopback-redirect.json")], environment: desktop)
        #expect(register.status == 0, "\(register)")
        let registered = try await ToolRunner.run(
            ["iap", "check", "--config", Self.fixture("non-loopback-redirect.json")], environment: desktop)
        #expect(
            registered.stdout.contains(
                prefix
                    + "(custom scheme: usable for sign-in on this desktop (portal-auth handles msauth.com.contoso.maps: links))\n"
            ), "\(registered)")

        let headless = try await ToolRunner.run(
            ["iap", "check", "--config", Self.fixture("non-loopback-redirect.json")],
            environment: ["DISPLAY": "", "WAYLAND_DISPLAY": ""])
        #expect(
            headless.stdout.contains(
                prefix
                    + "(custom scheme: no desktop session here, so sign-in pastes the final msauth.com.contoso.maps: address back)\n"
            ), "\(headless)")
        let json = try jsonReport(try await check("non-loopback-redirect.json", ["--format", "json"]))
        #expect(json["configuration"]?["custom_scheme_redirect"] == .bool(true))
        #expect(json["warnings"]?.arrayValue?.isEmpty == true)
    }

    // MARK: - Invalid files

    static let invalid: [(fixture: String, status: Int32, diagnostics: [String])] = [
        (
            "missing-key.json", 65,
            [":1:1: error: missing required key `token_url` (the identity provider's token endpoint URL)"]
        ),
        ("wrong-type.json", 65, [":7:3: error: `scope` must be an array of strings, found a string"]),
        (
            "bad-url.json", 65,
            [
                #":3:3: error: `token_url` must be an absolute URL such as https://login.example.com/authorize, found "oauth2/v2.0/token""#
            ]
        ),
        (
            "http-endpoint.json", 65,
            [
                #":2:3: error: `authorize_url` must use https (http is allowed only for loopback hosts: 127.0.0.0/8, [::1], localhost and *.localhost), found "http://login.contoso.com/oauth2/v2.0/authorize""#
            ]
        ),
        (
            "bad-patterns.json", 65,
            [
                #":15:5: error: `hosts_behind_proxy[1]` is not a valid host pattern: "a*.contoso.com": a wildcard is allowed only alone ("*") or as the whole first label ("*.contoso.com")"#,
                #":16:5: error: `hosts_behind_proxy[2]` is not a valid host pattern: "https://maps.contoso.com": it is a URL; write only the host ("maps.contoso.com")"#,
                #":17:5: error: `hosts_behind_proxy[3]` is not a valid host pattern: "*.": "*." names no domain; write "*.contoso.com" or "*""#,
            ]
        ),
        (
            "unknown-prompt-type.json", 65,
            [
                #":17:3: error: `authorization_prompt_type` has the unknown value "selectaccount"; allowed values: "", "none", "login", "consent", "select_account""#
            ]
        ),
        (
            "empty-scope.json", 65,
            [#":7:3: error: `scope` must list at least one scope, e.g. ["openid", "offline_access"]"#]
        ),
        (
            "root-array.json", 65,
            [
                ":1:1: error: the configuration must be a JSON object with the keys authorize_url, token_url, logout_url, client_id, redirect_url, scope, hosts_behind_proxy, found an array"
            ]
        ),
        ("syntax-error.json", 65, [#":6:16: error: JSON syntax error: '}' expected near '"redirect_url"'"#]),
        (
            "duplicate-key.json", 65,
            [
                #":7:13: error: JSON syntax error: duplicate object key near '"client_id"'; each key may appear only once"#
            ]
        ),
        (
            "empty.json", 65,
            [
                ": error: the file is empty; it must hold a JSON object with the keys authorize_url, token_url, logout_url, client_id, redirect_url, scope, hosts_behind_proxy"
            ]
        ),
        (
            "non-utf8.json", 65,
            [":2:26: error: the file is not UTF-8 text: byte 0xE9 at byte offset 27 is invalid; save the file as UTF-8"]
        ),
        (
            "many-problems.json", 65,
            [
                ":1:1: error: missing required key `logout_url` (the identity provider's logout endpoint URL)",
                ":4:3: error: `client_id` must be a string, found a number",
                ":8:5: error: `scope[1]` must not be empty",
                #":14:5: error: `hosts_behind_proxy[1]` is not a valid host pattern: "**.contoso.com": a wildcard is allowed only alone ("*") or as the whole first label ("*.contoso.com")"#,
            ]
        ),
        (
            "does-not-exist.json", 66,
            [
                ": error: the file does not exist; check the path (a relative path is resolved from the current directory)"
            ]
        ),
    ]

    @Test("invalid files: the exit status and file:line:column diagnostics on stderr", arguments: invalid)
    func invalidFile(fixture: String, status: Int32, diagnostics: [String]) async throws {
        let file = Self.fixture(fixture)
        let result = try await check(fixture, ["--url", "https://maps.contoso.com/"])
        #expect(result.status == status, "\(result)")
        #expect(result.stdout.isEmpty)
        let count = diagnostics.count == 1 ? "1 error" : "\(diagnostics.count) errors"
        #expect(
            result.stderrLines == diagnostics.map { file + $0 } + [
                "\(file): not a usable IAP configuration (\(count))",
                "\(file): --url not checked because the configuration is invalid",
            ])
    }

    @Test("a directory is unreadable input (66)")
    func directory() async throws {
        let result = try await ToolRunner.run(["iap", "check", "--config", Self.fixtures.path])
        #expect(result.status == 66)
        #expect(
            result.stderrLines.first
                == "\(Self.fixtures.path): error: this is a directory; give the path of the JSON configuration file itself"
        )
    }

    @Test("a file over 1 MiB is invalid content (65)")
    func tooLarge() async throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("huge.json")
        var text = try String(contentsOfFile: Self.fixture("entra.json"), encoding: .utf8)
        text += String(repeating: "\n", count: (1 << 20) + 1 - text.utf8.count)
        try Data(text.utf8).write(to: file)
        let result = try await ToolRunner.run(["iap", "check", "--config", file.path, "--format", "json"])
        #expect(result.status == 65)
        let json = try jsonReport(result)
        #expect(
            json["errors"]?.arrayValue?.first?["message"]
                == .string(
                    "the file is larger than 1048576 bytes (1 MiB), the limit for a configuration file; check that this is the right file"
                ))
    }

    // MARK: - JSON output

    @Test("--format json on a valid file: the whole structure")
    func jsonValid() async throws {
        let result = try await check(
            "entra.json",
            ["--format", "json", "--url", "https://maps.contoso.com/x", "--url", "http://evilcontoso.com"])
        #expect(result.status == 1, "a --url not covered")
        let json = try jsonReport(result)
        #expect(json["valid"] == .bool(true))
        #expect(json["file"] == .string(Self.fixture("entra.json")))
        #expect(json["errors"] == .array([]))
        #expect(json["warnings"] == .array([]))
        let configuration = try #require(json["configuration"]?.objectValue)
        #expect(
            configuration.keys == [
                "authorize_url", "token_url", "logout_url", "client_id", "redirect_url", "scope", "hosts_behind_proxy",
                "authorization_prompt_type", "loopback_redirect", "custom_scheme_redirect",
            ])
        #expect(configuration["client_id"] == .string("6731de76-14a6-49ae-97bc-6eba6914391e"))
        #expect(configuration["scope"]?.arrayValue?.count == 4)
        #expect(
            configuration["hosts_behind_proxy"] == .array([.string("*.contoso.com"), .string("gis.contoso.net:8443")]))
        #expect(configuration["authorization_prompt_type"] == .string(""))
        #expect(configuration["loopback_redirect"] == .bool(true))
        #expect(
            json["urls"]
                == .array([
                    .object(["url": .string("https://maps.contoso.com/x"), "can_be_used": .bool(true)]),
                    .object(["url": .string("http://evilcontoso.com"), "can_be_used": .bool(false)]),
                ]))
    }

    @Test("--format json on an invalid file: errors with key, line and column; configuration null")
    func jsonInvalid() async throws {
        let result = try await check("many-problems.json", ["--format", "json", "--url", "https://maps.contoso.com/"])
        #expect(result.status == 65)
        let json = try jsonReport(result)
        #expect(json["valid"] == .bool(false))
        #expect(json["configuration"] == .null)
        let errors = try #require(json["errors"]?.arrayValue)
        #expect(
            errors.map { $0["key"] } == [
                .string("logout_url"), .string("client_id"), .string("scope[1]"), .string("hosts_behind_proxy[1]"),
            ])
        #expect(errors.map { $0["line"] } == [.integer(1), .integer(4), .integer(8), .integer(14)])
        #expect(errors[1]["column"] == .integer(3))
        #expect(errors[1]["message"] == .string("`client_id` must be a string, found a number"))
        #expect(
            json["urls"]
                == .array([.object(["url": .string("https://maps.contoso.com/"), "can_be_used": .bool(false)])]))
    }

    @Test("--format json on a missing file: exit 66, null key and position")
    func jsonMissing() async throws {
        let result = try await check("does-not-exist.json", ["--format", "json"])
        #expect(result.status == 66)
        let json = try jsonReport(result)
        let error = try #require(json["errors"]?.arrayValue?.first?.objectValue)
        #expect(error["key"] == .null && error["line"] == .null && error["column"] == .null)
    }

    @Test("--format json on a file with a warning")
    func jsonWarning() async throws {
        let result = try await check("unknown-key-typo.json", ["--format", "json"])
        #expect(result.status == 0)
        let json = try jsonReport(result)
        #expect(
            json["warnings"]
                == .array([
                    .object([
                        "message": .string(
                            "unknown key `authorisation_prompt_type` is ignored; did you mean `authorization_prompt_type`?"
                        ),
                        "key": .string("authorisation_prompt_type"), "line": .integer(17), "column": .integer(3),
                    ])
                ]))
    }

    // MARK: - Usage

    static let usage: [(arguments: [String], message: String)] = [
        (
            ["--url", "maps.contoso.com"],
            #"portal-auth: error: --url "maps.contoso.com" is not an absolute http or https URL; write it like https://maps.contoso.com/portal"#
        ),
        (
            ["--url", "ftp://maps.contoso.com/"],
            #"portal-auth: error: --url "ftp://maps.contoso.com/" is not an absolute http or https URL; write it like https://maps.contoso.com/portal"#
        ),
        (
            ["--format", "xml"],
            "portal-auth: error: the value 'xml' is invalid for '--format <format>'. Please provide one of 'text' and 'json'."
        ),
        (["--frobnicate"], "portal-auth: error: unknown option '--frobnicate'"),
    ]

    @Test("usage errors exit 64 with the reason on stderr", arguments: usage)
    func usageError(arguments: [String], message: String) async throws {
        let result = try await check("entra.json", arguments)
        #expect(result.status == 64, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderrLines.first == message)
    }

    @Test("a missing --config is a usage error")
    func missingConfig() async throws {
        let result = try await ToolRunner.run(["iap", "check"])
        #expect(result.status == 64)
        #expect(result.stderrLines.first == "portal-auth: error: missing expected argument '--config <file>'")
    }

    // MARK: - Help and version

    @Test("--version prints the version")
    func version() async throws {
        let result = try await ToolRunner.run(["--version"])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("portal-auth \(PortalAuthVersion.string) (libcurl "), "\(result)")
    }

    @Test("help explains the tool, the iap group and check, with an example configuration")
    func help() async throws {
        let root = try await ToolRunner.run(["--help"])
        #expect(root.status == 0)
        #expect(root.stdout.contains("OVERVIEW: Sign in to ArcGIS portals"))
        #expect(root.stdout.contains("  iap "))
        #expect(root.stdout.contains("Exit status:\n  0    success;"), "\(root)")
        #expect(root.stdout.contains("  PORTAL_AUTH_PROXY_TOKEN "))
        #expect(root.stdout.contains("\nFiles:\n"))
        #expect(root.stdout.contains("  portal-auth iap check --config contoso-iap.json\n"))
        let group = try await ToolRunner.run(["iap", "--help"])
        #expect(group.stdout.contains("  check "))
        let check = try await ToolRunner.run(["iap", "check", "--help"])
        #expect(check.status == 0)
        for text in [
            "--config <file>", "--url <url>", "--format <format>", "\"hosts_behind_proxy\": [\"*.contoso.com\"]",
            "select_account", "Exit status: 0 valid",
        ] {
            #expect(check.stdout.contains(text), "missing \(text)")
        }
    }

    // MARK: - The runner itself

    @Test("the runner kills a tool that runs past its timeout")
    func timeout() async throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Opening a FIFO that no one writes to blocks until the runner gives up.
        let fifo = directory.appendingPathComponent("never.json")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        let result = try await ToolRunner.run(["iap", "check", "--config", fifo.path], timeout: .milliseconds(500))
        #expect(result.timedOut)
        #expect(result.status == 128 + SIGTERM)
    }
}
