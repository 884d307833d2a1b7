import Foundation
import Glibc
import Testing
@testable import PortalAuth

/// Sign-ins whose redirect URL is the custom scheme `my-maps-app://auth`, through the real desktop chain: an Xvfb
/// display, Chromium signing in on the test server, the redirect's address handed to `xdg-open` (the one step the
/// browser driver does in the browser's place), xdg-utils' generic path reading the desktop database in a private
/// `XDG_DATA_HOME`, `portal-auth handle-redirect` started from the `.desktop` file's `Exec`, and the private socket
/// in `XDG_RUNTIME_DIR` to the waiting `portal-auth`.
@Suite(
    "Custom-scheme redirect through the desktop's scheme handler", .serialized, .enabled(if: TestServer.isConfigured))
struct CustomSchemeSignInTests {
    private static let scheme = "my-maps-app"
    private static let redirect = "my-maps-app://auth"

    private func schemeConfig() throws -> String {
        let path = ProcessInfo.processInfo.environment["PORTAL_AUTH_TEST_IAP_SCHEME_CONFIG"] ?? ""
        try #require(
            !path.isEmpty,
            "PORTAL_AUTH_TEST_IAP_SCHEME_CONFIG is not set: restart the server with scripts/authserver start")
        return path
    }

    /// Registers portal-auth for the scheme on `desktop`, checking the desktop's own view of it.
    private func register(_ desktop: VirtualDesktop, _ arguments: [String]) async throws {
        let result = try await ToolRunner.run(["register-scheme"] + arguments, environment: desktop.environment)
        #expect(result.status == 0, "\(result)")
        let file = desktop.path("data/applications/portal-auth-\(Self.scheme).desktop")
        let validate = try await run("/usr/bin/desktop-file-validate", [file], environment: desktop.environment)
        #expect(validate.status == 0, "desktop-file-validate: \(validate.output)")
        let query = try await run(
            "/usr/bin/xdg-mime", ["query", "default", "x-scheme-handler/\(Self.scheme)"],
            environment: desktop.environment)
        #expect(query.output == "portal-auth-\(Self.scheme).desktop", "xdg-mime's generic path finds the handler")
    }

    // MARK: - Through the desktop

    @Test("iap login with redirect_url my-maps-app://auth completes through xdg-open and the scheme handler")
    func iapLogin() async throws {
        let server = try TestServer.current()
        let desktop = try VirtualDesktop()
        let store = try ScratchStore()
        let config = try schemeConfig()
        try await register(desktop, ["--config", config])

        let log = desktop.path("browser.log")
        let environment = desktop.environment.merging([
            "PORTAL_AUTH_STORE": store.path, "PORTAL_AUTH_TEST_BROWSER_LOG": log,
            "PORTAL_AUTH_TEST_BROWSER_HEADED": "1",
        ]) { $1 }
        let result = try await ToolRunner.run(
            ["iap", "login", "--config", config, "--browser-command", server.browser, "--timeout", "90"],
            environment: environment, timeout: .seconds(120))
        #expect(result.status == 0, "\(result)\n\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        #expect(result.stderr.contains("redirect_uri=my-maps-app%3A%2F%2Fauth"))
        #expect(result.stderr.contains("Waiting for the redirect on my-maps-app://auth"))

        let browserLog = try await Self.browserLog(log, once: "xdg-open my-maps-app: exit 0")
        #expect(browserLog.contains("redirect to my-maps-app: handed to xdg-open"))
        #expect(browserLog.contains("xdg-open my-maps-app: exit 0"), "the handler took the address: \(browserLog)")

        let entry = try #require(store.entries().values.first)
        #expect(entry["kind"]?.stringValue == "iap")
        #expect(entry["redirect_url"]?.stringValue == Self.redirect)
        let idToken = try IDToken(compact: try #require(entry["id_token"]?.stringValue))
        #expect(idToken.issuer == server.issuer)
        let token = try #require(entry["access_token"]?.stringValue)
        let protected = try await server.get(
            server.iapURL, headers: [("Authorization", "Bearer \(token)"), ("Accept", "application/json")])
        #expect(protected.statusCode == 200)
        let left = (try? FileManager.default.contentsOfDirectory(atPath: desktop.channelFolder)) ?? []
        #expect(left.isEmpty, "the sign-in's socket is removed: \(left)")
    }

    @Test(
        "portal login (OAuthUserCredential.credential(for:)) with --redirect-url my-maps-app://auth completes through the handler"
    )
    func portalLogin() async throws {
        let server = try TestServer.current()
        let desktop = try VirtualDesktop()
        let store = try ScratchStore()
        try await register(desktop, ["--scheme", Self.scheme])
        let log = desktop.path("browser.log")
        let result = try await ToolRunner.run(
            [
                "login", "--portal", server.portal, "--client-id", server.clientID, "--redirect-url", Self.redirect,
                "--browser-command", server.browser, "--timeout", "90",
            ],
            environment: desktop.environment.merging([
                "PORTAL_AUTH_STORE": store.path, "PORTAL_AUTH_TEST_BROWSER_LOG": log,
            ]) { $1 },
            timeout: .seconds(120))
        #expect(result.status == 0, "\(result)\n\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        #expect(result.stderr.contains("Signed in to \(server.portal) as alice"))
        let entry = try #require(store.entries()["oauth-user|\(server.portal)|\(server.clientID)"])
        #expect(entry["redirect_url"]?.stringValue == Self.redirect)
        let token = try #require(entry["access_token"]?.stringValue)
        let accepted = try await server.get(
            "\(server.portal)/sharing/rest/portals/self?f=json", headers: [("X-Esri-Authorization", "Bearer \(token)")])
        #expect(try JSONValue.parse(accepted.body)["user"]?["username"]?.stringValue == "alice")
        #expect(
            try await Self.browserLog(log, once: "xdg-open my-maps-app: exit 0").contains(
                "xdg-open my-maps-app: exit 0"))
    }

    /// The browser driver's log once it holds `line`: the sign-in can complete (the handler forwarded the address)
    /// before the driver has written what `xdg-open` returned. Waits at most 40 s, then returns what is there.
    static func browserLog(_ log: String, once line: String) async throws -> String {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .seconds(40))
        var text = ""
        while clock.now < deadline {
            text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            if text.contains(line) { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        return text
    }

    @Test(
        "the library: OAuthUserCredential.credential(for:) with redirectURL my-maps-app://auth completes through the handler"
    )
    func libraryCredential() async throws {
        let server = try TestServer.current()
        let desktop = try VirtualDesktop()
        try await register(desktop, ["--scheme", Self.scheme])
        let log = desktop.path("browser.log")
        // The browser (and the xdg-open it runs) sees the desktop's variables; the sign-in in this process reads them
        // through the receiver's task-local environment.
        let variables = desktop.environment.merging(["PORTAL_AUTH_TEST_BROWSER_LOG": log]) { $1 }
            .sorted { $0.key < $1.key }.map { "'\($0.key)=\($0.value)'" }.joined(separator: " ")
        let settings = SignInSettings(
            browser: CommandBrowserOpener(command: "env \(variables) '\(server.browser)'"), timeout: .seconds(90),
            environment: .current(desktop.environment))
        let configuration = OAuthUserConfiguration(
            portalURL: URL(string: server.portal)!, clientID: server.clientID, redirectURL: URL(string: Self.redirect)!)
        let credential = try await RedirectReceiver.$environmentOverride.withValue(desktop.environment) {
            try await OAuthUserCredential.credential(for: configuration, settings: settings)
        }
        #expect(credential.username == "alice")
        let token = try await credential.tokenInfo.accessToken
        let accepted = try await server.get(
            "\(server.portal)/sharing/rest/portals/self?f=json", headers: [("X-Esri-Authorization", "Bearer \(token)")])
        #expect(try JSONValue.parse(accepted.body)["user"]?["username"]?.stringValue == "alice")
        #expect(
            try await Self.browserLog(log, once: "xdg-open my-maps-app: exit 0").contains(
                "xdg-open my-maps-app: exit 0"))
    }

    @Test("on a terminal an unregistered scheme is offered once; yes registers it and the sign-in completes")
    func askedOnTerminal() async throws {
        let server = try TestServer.current()
        let desktop = try VirtualDesktop()
        let store = try ScratchStore()
        let command = [
            BinaryLocator.toolPath, "iap", "login", "--config", try schemeConfig(), "--browser-command", server.browser,
            "--timeout", "90",
        ].map { "'\($0)'" }.joined(separator: " ")
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qfec", command, "/dev/null"]
        process.environment = ProcessInfo.processInfo.environment.merging(desktop.environment) { $1 }
            .merging([
                "PORTAL_AUTH_STORE": store.path, "TERM": "dumb",
                "PORTAL_AUTH_TEST_BROWSER_LOG": desktop.path("browser.log"),
            ]) { $1 }
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
        var text = readOutput(of: output, until: "[y/N]", timeout: .seconds(60))
        #expect(text.contains("portal-auth is not registered as this desktop's handler of my-maps-app: links"))
        input.fileHandleForWriting.write(Data("y\n".utf8))
        process.waitUntilExit()
        text += String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.contains("portal-auth now handles my-maps-app: links"))
        #expect(text.components(separatedBy: "[y/N]").count == 2, "asked once")
        #expect(
            FileManager.default.fileExists(atPath: desktop.path("data/applications/portal-auth-my-maps-app.desktop")))
        #expect(try store.entries().values.first?["redirect_url"]?.stringValue == Self.redirect)
    }

    // MARK: - Refusals

    @Test("an address that matches no waiting sign-in is rejected and says so; the waiting sign-in goes on")
    func unmatchedAddress() async throws {
        let server = try TestServer.current()
        let desktop = try VirtualDesktop()
        let store = try ScratchStore()
        try await register(desktop, ["--scheme", Self.scheme])

        let nobody = try await ToolRunner.run(
            ["handle-redirect", "my-maps-app://auth?code=secret-code&state=abc"], environment: desktop.environment)
        #expect(nobody.status == 65, "\(nobody)")
        #expect(nobody.stderr.contains("no sign-in is waiting"))

        let waiting = try BackgroundTool.start(
            [
                "login", "--portal", server.portal, "--client-id", server.clientID, "--redirect-url", Self.redirect,
                "--browser-command", "true", "--timeout", "20",
            ],
            environment: desktop.environment.merging(["PORTAL_AUTH_STORE": store.path]) { $1 })
        _ = waiting.stderr(until: "Waiting for the redirect on my-maps-app://auth")
        let wrong = try await ToolRunner.run(
            ["handle-redirect", "my-maps-app://auth?code=secret-code&state=someone-elses"],
            environment: desktop.environment)
        #expect(wrong.status == 65, "\(wrong)")
        #expect(wrong.stderr.contains("matches no waiting sign-in"))
        #expect(
            !wrong.stderr.contains("secret-code") && !wrong.stderr.contains("someone-elses"),
            "the address is never printed")
        #expect(waiting.process.isRunning, "the sign-in keeps waiting for its own address")
        waiting.process.waitUntilExit()
        #expect(waiting.process.terminationStatus == 75, "then times out as usual")
    }

    @Test("not registered and nobody to ask: exit 77 with the command to run; a scheme of another app needs --force")
    func notRegistered() async throws {
        let server = try TestServer.current()
        let desktop = try VirtualDesktop()
        let store = try ScratchStore()
        let result = try await ToolRunner.run(
            ["iap", "login", "--config", try schemeConfig(), "--browser-command", "true", "--timeout", "5"],
            environment: desktop.environment.merging(["PORTAL_AUTH_STORE": store.path]) { $1 })
        #expect(result.status == 77, "\(result)")
        #expect(result.stderr.contains("Run once: portal-auth register-scheme --scheme my-maps-app"))
        _ = server

        let applications = desktop.path("data/applications")
        try FileManager.default.createDirectory(atPath: applications, withIntermediateDirectories: true)
        try "[Desktop Entry]\nType=Application\nName=Maps\nExec=/bin/true %u\nMimeType=x-scheme-handler/my-maps-app;\n"
            .write(toFile: "\(applications)/maps.desktop", atomically: true, encoding: .utf8)
        _ = try await run(
            "/usr/bin/xdg-mime", ["default", "maps.desktop", "x-scheme-handler/my-maps-app"],
            environment: desktop.environment)
        let refused = try await ToolRunner.run(
            ["register-scheme", "--scheme", Self.scheme], environment: desktop.environment)
        #expect(refused.status == 64, "\(refused)")
        #expect(refused.stderr.contains("handled by maps.desktop") && refused.stderr.contains("--force"))
        try await register(desktop, ["--scheme", Self.scheme, "--force"])

        let removed = try await ToolRunner.run(
            ["unregister-scheme", "--scheme", Self.scheme], environment: desktop.environment)
        #expect(removed.status == 0, "\(removed)")
        #expect(!FileManager.default.fileExists(atPath: "\(applications)/portal-auth-my-maps-app.desktop"))
        #expect(
            FileManager.default.fileExists(atPath: "\(applications)/maps.desktop"), "the other app's file is left alone"
        )
    }

    // MARK: - Without a desktop

    @Test("without a display and without a terminal the sign-in stops at once and says how to go on")
    func noDesktopNoTerminal() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        let result = try await ToolRunner.run(
            ["iap", "login", "--config", try schemeConfig(), "--browser-command", server.browser, "--timeout", "30"],
            environment: ["DISPLAY": "", "WAYLAND_DISPLAY": "", "PORTAL_AUTH_STORE": store.path])
        #expect(result.status == 64, "\(result)")
        #expect(result.stderr.contains("No desktop session"))
        #expect(result.stderr.contains("neither DISPLAY nor WAYLAND_DISPLAY is set"))
    }

    @Test("without a display, on a terminal, the final my-maps-app: address pasted back finishes the sign-in")
    func noDesktopPaste() async throws {
        let server = try TestServer.current()
        let store = try ScratchStore()
        let copied = store.directory.appendingPathComponent("address").path
        let command = [
            BinaryLocator.toolPath, "iap", "login", "--config", try schemeConfig(), "--browser-command", server.browser,
            "--timeout", "90",
        ].map { "'\($0)'" }.joined(separator: " ")
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qfec", command, "/dev/null"]
        process.environment = ProcessInfo.processInfo.environment.merging([
            "PORTAL_AUTH_STORE": store.path, "TERM": "dumb", "DISPLAY": "", "WAYLAND_DISPLAY": "",
            "PORTAL_AUTH_TEST_BROWSER_SCHEME_FILE": copied,
        ]) { $1 }
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
        var text = readOutput(of: output, until: "left (Ctrl-C to cancel)", timeout: .seconds(60))
        #expect(text.contains("No desktop session"))
        #expect(text.contains("paste here the address the browser ends on or fails to open"))

        var address: String?
        for _ in 0..<600 where address == nil {
            address = (try? String(contentsOfFile: copied, encoding: .utf8))?.trimmingCharacters(
                in: .whitespacesAndNewlines)
            if address == nil { try await Task.sleep(for: .milliseconds(200)) }
        }
        let pasted = try #require(address, "the browser never reached the my-maps-app: redirect")
        #expect(pasted.hasPrefix("my-maps-app://auth?"))
        input.fileHandleForWriting.write(Data((pasted + "\n").utf8))
        process.waitUntilExit()
        text += String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(try store.entries().values.first?["redirect_url"]?.stringValue == Self.redirect)
    }

    // MARK: - Helpers

    private func run(_ program: String, _ arguments: [String], environment: [String: String]) async throws -> (
        status: Int32, output: String
    ) {
        try await BlockingWork.run {
            let process = ChildProcess()
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = arguments
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = pipe
            try process.run()
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (
                process.terminationStatus,
                String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            )
        }
    }
}
