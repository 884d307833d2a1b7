import Foundation
import Testing
@testable import PortalAuth

/// File names are text from outside too (issue 25): an IAP configuration file or a store file named with ESC, BEL and
/// a line break that forges a `portal-auth:` line must reach the terminal made visible, on stdout and stderr alike.
@Suite("hostile file names in the tool's output", .serialized)
struct HostileFileNameTests {
    /// ESC sequences (window title, clear screen), BEL and a line break starting a forged line of the tool's own.
    static let hostile = "iap\u{1B}]0;owned\u{07}\u{1B}[2J\nportal-auth: error: forged line\n"
    /// How the hostile part is shown.
    static let shown = #"iap\u{1B}]0;owned\u{7}\u{1B}[2J\u{A}portal-auth: error: forged line\u{A}"#
    /// How the hostile part is written in a command to paste (`$'…'` quoting).
    static let quoted = #"iap\x1b]0;owned\x07\x1b[2J\nportal-auth: error: forged line\n"#

    /// A scratch folder with a hostile IAP configuration (endpoints on a closed loopback port) and a hostile store path.
    struct Scratch {
        let directory: URL
        let config: String
        let store: String

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("pa-names-\(UUID().uuidString)")
            try FileManager.default.createDirectory(
                at: directory.appendingPathComponent("state"), withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
            config = directory.appendingPathComponent(HostileFileNameTests.hostile + ".json").path
            store = directory.appendingPathComponent("state/" + HostileFileNameTests.hostile + "credentials.json").path
            try #"""
            {"authorize_url": "http://127.0.0.1:9/authorize", "token_url": "http://127.0.0.1:9/token",
             "logout_url": "http://127.0.0.1:9/logout", "client_id": "client-1", "redirect_url": "http://127.0.0.1/callback",
             "scope": ["openid", "offline_access"], "hosts_behind_proxy": ["maps.example.test"]}
            """#.write(toFile: config, atomically: true, encoding: .utf8)
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }

        /// Stores an IAP sign-in made with the hostile configuration (its access token expired when `expired`).
        func storeSignIn(expired: Bool) async throws {
            let (key, entry) = try PreparedStore.iap(file: config, token: "iap-token", accessIn: expired ? -60 : 3600)
            try await CredentialStoreFile(location: StoreLocation(path: store)).update { $0.set(entry, for: key) }
        }

        var environment: [String: String] {
            // No session bus here (nor in XDG_RUNTIME_DIR): the keyring is never asked.
            [
                "PORTAL_AUTH_STORE": store, "DISPLAY": "", "WAYLAND_DISPLAY": "", "DBUS_SESSION_BUS_ADDRESS": "",
                "HOME": directory.path,
                "XDG_RUNTIME_DIR": directory.path,
            ]
        }
    }

    static func problems(_ result: ToolRunner.Result) -> [String] {
        var found: [String] = []
        for (name, text) in [("stdout", result.stdout), ("stderr", result.stderr)] {
            if text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control && $0 != "\n" }) {
                found.append("\(name) holds a control character")
            }
            if text.split(separator: "\n").contains(where: { $0.hasPrefix("portal-auth: error: forged") }) {
                found.append("\(name) holds a forged line")
            }
        }
        return found
    }

    @Test(
        "iap check, status (stdout); iap login, token, refresh, iap logout (stderr): the file names shown escaped, no forged line",
        arguments: [
            (["iap", "check", "--config"], false, false), (["status", "--timeout", "10", "--iap"], true, false),
            (["iap", "login", "--no-browser", "--timeout", "3", "--config"], false, false),
            (["token", "--timeout", "10", "--iap"], false, false),
            (["refresh", "--timeout", "10", "--iap"], true, true),
            (["refresh", "--timeout", "10", "--iap"], false, false),
            (["iap", "logout", "--no-browser", "--timeout", "3", "--config"], false, false),
        ])
    func hostileNames(command: [String], signedIn: Bool, expired: Bool) async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        if signedIn { try await scratch.storeSignIn(expired: expired) }
        let result = try await ToolRunner.run(
            command + [scratch.config], environment: scratch.environment, timeout: .seconds(60))
        #expect(!result.timedOut)
        #expect(
            Self.problems(result).isEmpty,
            "\(Self.problems(result)): \(result.stdout.debugDescription) \(result.stderr.debugDescription)")
        // The name is there, made visible or quoted for pasting (so the check above saw it).
        let output = result.stdout + result.stderr
        #expect(output.contains(Self.shown) || output.contains(Self.quoted), "\(result)")
    }

    @Test("status names a hostile store file escaped, with a stored sign-in of a hostile configuration")
    func hostileStore() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        try await scratch.storeSignIn(expired: false)
        let result = try await ToolRunner.run(["status"], environment: scratch.environment)
        #expect(result.status == 0, "\(result)")
        #expect(Self.problems(result).isEmpty, "\(Self.problems(result)): \(result.stdout.debugDescription)")
        #expect(
            result.stdout.contains("Credential store: ")
                && result.stdout.contains("state/" + Self.shown + "credentials.json"), "\(result)")
        #expect(
            result.stdout.contains("IAP the IAP configuration") || result.stdout.contains(Self.shown + ".json"),
            "\(result)")
    }
}
