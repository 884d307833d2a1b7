import Foundation
import Testing
import PortalAuth

/// What scripts read: the token JSON shape, JSON errors, one error prefix, `exec`, `--version`.
@Suite("output for scripts")
struct ScriptOutputTests {
    static let portal = "https://gis.example.test/portal"

    @Test("token --format json: the common shape with bare URLs, for a portal and an IAP sign-in")
    func tokenShape() async throws {
        let store = try PreparedStore()
        let file = store.directory.appendingPathComponent("contoso-iap.json")
        try FileManager.default.copyItem(at: SignInSelectionCommandTests.fixture("iap/entra.json"), to: file)
        try await store.write([
            PreparedStore.portal(Self.portal, token: "portal-token"),
            try PreparedStore.iap(file: file.path, token: "iap-token"),
        ])

        let portal = try await ToolRunner.run(
            ["token", "--portal", Self.portal, "--format", "json"], environment: store.environment)
        let portalJSON = try JSONValue.parse(Data(portal.stdout.utf8))
        #expect(
            TokenJSONShape.problems(in: portalJSON, kind: "oauth-user").isEmpty,
            "\(TokenJSONShape.problems(in: portalJSON, kind: "oauth-user"))")
        #expect(portalJSON["url"]?.stringValue == Self.portal)
        #expect(portalJSON["client_id"]?.stringValue == "app1")
        #expect(portalJSON["token_type"]?.stringValue == "Bearer")

        let iap = try await ToolRunner.run(
            ["token", "--iap", file.path, "--format", "json"], environment: store.environment)
        let iapJSON = try JSONValue.parse(Data(iap.stdout.utf8))
        #expect(
            TokenJSONShape.problems(in: iapJSON, kind: "iap").isEmpty,
            "\(TokenJSONShape.problems(in: iapJSON, kind: "iap"))")
        #expect(iapJSON["url"]?.stringValue?.hasPrefix("https://login.microsoftonline.com/") == true)
        #expect(iapJSON["configuration_file"]?.stringValue == file.resolvingSymlinksInPath().path)
    }

    @Test(
        "under --format json a failure is also a JSON object on stdout, with the exit status",
        arguments: [
            (["token", "--format", "json"], Int32(77), "refused"),
            (["token", "--format", "json", "--portal", "not a url"], 64, "usage"),
            (["refresh", "--format=json"], 77, "refused"),
            (["status", "--format", "json", "--name", "nobody"], 64, "usage"),
        ])
    func jsonErrors(arguments: [String], status: Int32, category: String) async throws {
        let store = try PreparedStore()
        let result = try await ToolRunner.run(arguments, environment: store.environment)
        #expect(result.status == status, "\(result)")
        let json = try JSONValue.parse(Data(result.stdout.utf8))
        #expect(json["error"]?["status"]?.integerValue == Int64(status), "\(result)")
        #expect(json["error"]?["category"]?.stringValue == category)
        let message = try #require(json["error"]?["message"]?.stringValue)
        #expect(!message.isEmpty && !message.contains("Usage:"))
        #expect(result.stderr.hasPrefix("portal-auth: error: \(message.split(separator: "\n")[0])"), "\(result)")
    }

    @Test(
        "every failure has the prefix portal-auth: error:, the argument parser's own included",
        arguments: [
            ["token", "--frob"], ["nonsense"], ["token", "--portal"], ["exec"], ["completion", "tcsh"],
            ["token", "--min-valid", "-1"],
        ])
    func errorPrefix(arguments: [String]) async throws {
        let store = try PreparedStore()
        let result = try await ToolRunner.run(arguments, environment: store.environment)
        #expect(result.status == 64, "\(result)")
        #expect(result.stderr.hasPrefix("portal-auth: error: "), "\(result)")
        #expect(!result.stderr.contains("Error: "), "\(result)")
    }

    @Test(
        "revoke of an IAP sign-in gives the iap logout command with its real file, ready to paste (issue 28, point 9)")
    func revokeIAPSuggestsLogout() async throws {
        let store = try PreparedStore()
        let file = store.directory.appendingPathComponent("work iap.json").path
        try FileManager.default.copyItem(
            at: SignInSelectionCommandTests.fixture("iap/entra.json"), to: URL(fileURLWithPath: file))
        try await store.write([try PreparedStore.iap(file: file, token: "iap-token")])
        let result = try await ToolRunner.run(["revoke", "--iap", file], environment: store.environment)
        #expect(result.status == 64, "\(result)")
        #expect(result.stderr.contains("end it with:\n    portal-auth iap logout --config '\(file)'"), "\(result)")
        #expect(!result.stderr.contains("--config FILE"), "\(result)")
    }

    @Test("exec --url: PORTAL_AUTH_URL is the URL asked for, not the sign-in's own (issue 28, point 13)")
    func execURL() async throws {
        let store = try PreparedStore()
        try await store.write([PreparedStore.portal(Self.portal, token: "portal-token")])
        let asked = Self.portal + "/sharing/rest/content/items/abc?f=json"
        let printed = try await ToolRunner.run(
            ["exec", "--url", asked, "--", "sh", "-c", #"printf '%s' "$PORTAL_AUTH_URL""#],
            environment: store.environment)
        #expect(printed.status == 0 && printed.stdout == asked, "\(printed)")
    }

    @Test("exec: the token in the command's environment only, its exit status and signal passed through")
    func exec() async throws {
        let store = try PreparedStore()
        try await store.write([PreparedStore.portal(Self.portal, token: "portal-token")])
        let printed = try await ToolRunner.run(
            [
                "exec", "--", "sh", "-c",
                #"printf '%s %s %s %s' "$PORTAL_AUTH_TOKEN" "$ARCGIS_TOKEN" "$PORTAL_AUTH_URL" "$PORTAL_AUTH_TOKEN_TYPE""#,
            ],
            environment: store.environment)
        #expect(
            printed.status == 0 && printed.stdout == "portal-token portal-token \(Self.portal) Bearer", "\(printed)")
        #expect(printed.stderr.isEmpty)

        let exited = try await ToolRunner.run(["exec", "--", "sh", "-c", "exit 7"], environment: store.environment)
        #expect(exited.status == 7, "\(exited)")
        let killed = try await ToolRunner.run(
            ["exec", "--", "sh", "-c", "kill -TERM $$"], environment: store.environment)
        #expect(killed.status == 128 + SIGTERM, "\(killed)")
        // The command gets the signals a tool ignored or blocked on its threads back in their default state.
        let interrupted = try await ToolRunner.run(
            ["exec", "--", "sh", "-c", "kill -INT $$; sleep 5; exit 3"], environment: store.environment)
        #expect(interrupted.status == 128 + SIGINT, "\(interrupted)")

        let missing = try await ToolRunner.run(["exec", "--", "no-such-command-here"], environment: store.environment)
        #expect(
            missing.status == 127
                && missing.stderr.hasPrefix("portal-auth: error: no-such-command-here: command not found"), "\(missing)"
        )
        let arguments = try await ToolRunner.run(
            ["exec", "--", "sh", "-c", #"cat /proc/$$/cmdline | tr '\0' ' '"#], environment: store.environment)
        #expect(arguments.status == 0 && !arguments.stdout.contains("portal-token"), "\(arguments)")

        let empty = try PreparedStore()
        let nothing = try await ToolRunner.run(["exec", "--", "true"], environment: empty.environment)
        #expect(nothing.status == 77, "\(nothing)")
    }

    @Test(
        "exec for an IAP sign-in: another sign-in's ARCGIS_TOKEN, PORTAL_AUTH_ID_TOKEN and other PORTAL_AUTH_* variables left in the environment never reach the command; the tool's settings do"
    )
    func execRemovesForeignTokenVariables() async throws {
        let store = try PreparedStore()
        let file = store.directory.appendingPathComponent("contoso-iap.json")
        try FileManager.default.copyItem(at: SignInSelectionCommandTests.fixture("iap/entra.json"), to: file)
        try await store.write([
            PreparedStore.portal(Self.portal, token: "portal-token"),
            try PreparedStore.iap(file: file.path, token: "iap-token"),
        ])
        // What an outer `exec` for the portal sign-in (or a CI job) left behind, and the tool's own settings.
        let leftOver = [
            "ARCGIS_TOKEN": "outer-portal-token", "PORTAL_AUTH_ID_TOKEN": "outer-id-token",
            "PORTAL_AUTH_TOKEN": "outer-token",
            "PORTAL_AUTH_TOKEN_EXPIRES_AT": "outer-expiry", "PORTAL_AUTH_REFRESH_TOKEN": "outer-refresh-token",
            "PORTAL_AUTH_CLIENT_SECRET": "outer-client-secret", "PORTAL_AUTH_SOMETHING_NEW": "outer-other",
            "PORTAL_AUTH_CA_BUNDLE": "/nonexistent/ca.pem", "PORTAL_AUTH_LAUNCH_DIR": "/nonexistent/launch",
            "PORTAL_AUTH_FAST_PATH": "on", "UNRELATED_VARIABLE": "kept",
        ]
        let result = try await ToolRunner.run(
            ["exec", "--iap", file.path, "--", "env"], environment: store.environment.merging(leftOver) { $1 })
        #expect(result.status == 0, "\(result)")
        let variables = Dictionary(
            result.stdoutLines.compactMap { line -> (String, String)? in
                guard let equals = line.firstIndex(of: "=") else { return nil }
                return (String(line[..<equals]), String(line[line.index(after: equals)...]))
            }, uniquingKeysWith: { $1 })
        for (name, value) in leftOver where value.hasPrefix("outer-") {
            #expect(!result.stdout.contains(value), "\(name) reached the command: \(result)")
        }
        #expect(variables["ARCGIS_TOKEN"] == nil && variables["PORTAL_AUTH_ID_TOKEN"] == nil, "\(result)")
        #expect(variables["PORTAL_AUTH_TOKEN"] == "iap-token" && variables["PORTAL_AUTH_KIND"] == "iap", "\(result)")
        #expect(variables["PORTAL_AUTH_STORE"] == store.path)
        #expect(
            variables["PORTAL_AUTH_CA_BUNDLE"] == "/nonexistent/ca.pem"
                && variables["PORTAL_AUTH_LAUNCH_DIR"] == "/nonexistent/launch")
        #expect(variables["PORTAL_AUTH_FAST_PATH"] == "on" && variables["UNRELATED_VARIABLE"] == "kept")
        let names = Set(variables.keys.filter { $0.hasPrefix("PORTAL_AUTH_") })
        #expect(
            names == [
                "PORTAL_AUTH_STORE", "PORTAL_AUTH_CA_BUNDLE", "PORTAL_AUTH_LAUNCH_DIR", "PORTAL_AUTH_FAST_PATH",
                "PORTAL_AUTH_TOKEN",
                "PORTAL_AUTH_TOKEN_TYPE", "PORTAL_AUTH_TOKEN_EXPIRES_AT", "PORTAL_AUTH_KIND", "PORTAL_AUTH_URL",
            ], "\(names.sorted())")
    }

    @Test(
        "exec passes the proxy-token choice on: a portal-auth run by the command sends the access token when --proxy-token access or PORTAL_AUTH_PROXY_TOKEN=access was given to exec (issue 36)",
        arguments: [
            (["--proxy-token", "access"], [String: String]()), ([], ["PORTAL_AUTH_PROXY_TOKEN": "access"]),
            ([], ["PORTAL_AUTH_PROXY_TOKEN": "ACCESS"]),
        ])
    func execPassesProxyTokenChoice(options: [String], variables: [String: String]) async throws {
        let store = try PreparedStore()
        let file = store.directory.appendingPathComponent("contoso-iap.json")
        try FileManager.default.copyItem(at: SignInSelectionCommandTests.fixture("iap/entra.json"), to: file)
        var iap = try PreparedStore.iap(file: file.path, token: "iap-access-token")
        iap.entry["id_token"] = .string("iap-id-token")
        iap.entry["id_token_expires_at"] = iap.entry["access_token_expires_at"]
        try await store.write([iap])
        let nested = [BinaryLocator.toolPath, "token", "--url", "https://maps.contoso.com/portal/"]
        let environment = store.environment.merging(variables) { $1 }
        // The same command outside exec sends the access token; inside, before issue 36, the nested command no longer
        // saw the choice and sent the ID token.
        let direct = try await ToolRunner.run(Array(nested.dropFirst()) + options, environment: environment)
        #expect(direct.stdoutLines == ["iap-access-token"], "\(direct)")
        let result = try await ToolRunner.run(
            ["exec", "--iap", file.path] + options + ["--"] + nested, environment: environment)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == ["iap-access-token"], "\(result)")
        // Without a choice the ID token goes, inside exec as outside.
        let plain = try await ToolRunner.run(
            ["exec", "--iap", file.path, "--"] + nested, environment: store.environment)
        #expect(plain.stdoutLines == ["iap-id-token"], "\(plain)")
    }

    @Test(
        "usage errors show argument values escaped, never raw escape sequences or forged lines; header names must be RFC 9110 tokens (issue 36)",
        arguments: [
            (["request", "\u{1B}[2J\u{1B}]0;owned\u{7}not a url"], "\\u{1B}[2J\\u{1B}]0;owned\\u{7}not a url"),
            (["token", "--url", "\u{1B}[2Jx\nportal-auth: forged line"], "\\u{1B}[2Jx\\u{A}portal-auth: forged line"),
            (["token", "--url=\u{1B}[2Jx"], "\\u{1B}[2Jx"),
            (
                ["token", "--format", "header", "--header-name", "X-A\u{1B}[2J"],
                "--header-name \"X-A\\u{1B}[2J\" is not an HTTP header name"
            ),
            (
                ["token", "--format", "header", "--header-name", "X-A(b)"],
                "--header-name \"X-A(b)\" is not an HTTP header name"
            ),
            (["request", "https://gis.example.test/", "-H", "X-A\u{1B}[2J: v"], "X-A\\u{1B}[2J: v"),
            (["request", "https://gis.example.test/", "-H", "X-A/b: v"], "--header \"X-A/b: v\" is not 'Name: value'"),
            (["status", "--timeout", "\u{1B}[31m5"], "\\u{1B}[31m5"),
        ])
    func usageErrorsEscaped(arguments: [String], shown: String) async throws {
        let store = try PreparedStore()
        let result = try await ToolRunner.run(arguments, environment: store.environment)
        #expect(result.status == 64, "\(result)")
        #expect(result.stderr.hasPrefix("portal-auth: error: "), "\(result)")
        #expect(!result.stderr.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 }, "\(result)")
        #expect(!result.stderr.contains("\nportal-auth: forged"), "\(result)")
        #expect(result.stderr.contains(shown), "\(result)")
    }

    @Test("--version names the libcurl and OpenSSL the tool runs with")
    func version() async throws {
        let result = try await ToolRunner.run(["--version"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.hasPrefix("portal-auth \(PortalAuthVersion.string) (libcurl "), "\(result)")
        #expect(result.stdout.contains("OpenSSL 3") || result.stdout.contains("OpenSSL 1"), "\(result)")
    }
}
