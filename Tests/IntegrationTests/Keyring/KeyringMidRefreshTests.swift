import Foundation
import Testing
@testable import PortalAuth

/// A rotating refresh in flight when the real desktop keyring goes away (issue 25): the screen locks, or
/// gnome-keyring-daemon crashes, while the identity provider answers. The rotated tokens must survive: kept in the
/// store file (0600) and moved back into the keyring once it is back, never lost to an `invalid_grant` at the next
/// refresh.
@Suite("Keyring lost while a refresh is in flight (gnome-keyring)", .serialized, .enabled(if: TestServer.isConfigured))
struct KeyringMidRefreshTests {
    let server: TestServer
    let control: TestControl

    init() async throws {
        server = try TestServer.current()
        control = try await TestControl.prepared()
    }

    enum Disruption: String, CaseIterable, Sendable {
        /// The login collection locked (a screen lock).
        case lock
        /// gnome-keyring-daemon killed (a crash).
        case crash
    }

    @Test(
        "the keyring locked or its daemon killed during a rotating refresh: the new tokens are kept, and the sign-in works once the keyring is back",
        arguments: Disruption.allCases, [false, true])
    func disruptedRefresh(disruption: Disruption, forcedKeyring: Bool) async throws {
        let home = try KeyringScratch.onPrivateKeyring()
        let keyring = home.keyring
        try await home.signIn(.iap, server: server)
        let store = forcedKeyring ? ["PORTAL_AUTH_STORE": "keyring"] : [:]
        let selector = ["--iap", server.iapConfig]
        let signedIn = try home.itemEntry(.iap)
        let firstRefreshToken = try #require(signedIn["refresh_token"]?.stringValue)

        // The provider takes its time to answer the refresh; the keyring goes while it does.
        try await control.resetStats()
        try await control.configure(["token_delay_ms": .integer(2500)])
        async let refreshRun = home.run(["refresh", "--print-token"] + selector, extra: store)
        var seen = 0
        for _ in 0..<400 where seen == 0 {
            seen = try await control.stats().refreshes
            if seen == 0 { try await Task.sleep(for: .milliseconds(25)) }
        }
        try #require(seen == 1, "the refresh request did not reach the provider")
        switch disruption {
        case .lock: try keyring.lock()
        case .crash: try keyring.killDaemon()
        }
        let refresh = try await refreshRun
        try await control.resetConfiguration()

        #expect(refresh.status == 0, "\(refresh)")
        let refreshed = refresh.stdout.trimmingCharacters(in: .newlines)
        #expect(!refreshed.isEmpty && refreshed != signedIn["access_token"]?.stringValue, "\(refresh)")
        #expect(refresh.stderr.contains("kept in the store file"), "\(refresh)")
        // Until the keyring is back the rotated tokens are in the store file, 0600, and nowhere else on disk.
        let index = try home.indexEntry(.iap).value
        #expect(index["keyring_deferred"] != nil && index["keyring"] == nil, "\(index)")
        #expect(index["refresh_token"]?.stringValue != firstRefreshToken)
        var info = stat()
        #expect(stat(home.indexPath, &info) == 0 && info.st_mode & 0o777 == 0o600)

        // The keyring back (unlocked at login, or the daemon started again): the next use moves the tokens into it.
        try keyring.unlock()
        let token = try await home.run(["token"] + selector, extra: store)
        #expect(token.status == 0, "\(token)")
        #expect(
            token.stdout.trimmingCharacters(in: .newlines) == refreshed, "the refreshed token, not the spent sign-in's")
        let moved = try home.indexEntry(.iap).value
        #expect(
            moved["keyring"] != nil && moved["keyring_deferred"] == nil && moved["refresh_token"] == nil, "\(moved)")
        #expect(try home.filesHolding([refreshed]).isEmpty, "the token left the store file")
        #expect(try home.itemEntry(.iap)["access_token"]?.stringValue == refreshed)

        // The rotated refresh token is the one the provider knows: the next refresh works (no invalid_grant).
        let again = try await home.run(["refresh"] + selector, extra: store)
        #expect(again.status == 0, "the sign-in was lost: \(again)")
    }

    @Test(
        "a keyring locked before the refresh: nothing is sent, exit 70 with what to do, and the sign-in works after unlocking"
    )
    func lockedBeforeRefresh() async throws {
        let home = try KeyringScratch.onPrivateKeyring()
        let keyring = home.keyring
        try await home.signIn(.iap, server: server)
        let selector = ["--iap", server.iapConfig]
        try keyring.lock()
        try await control.resetStats()
        let refresh = try await home.run(["refresh"] + selector, extra: ["PORTAL_AUTH_STORE": "keyring"])
        #expect(refresh.status == 70, "\(refresh)")
        #expect(refresh.stderr.contains("unlock the keyring"), "\(refresh)")
        #expect(
            try await control.stats().refreshes == 0, "a refresh token was spent with nowhere to keep its successor")
        try keyring.unlock()
        let after = try await home.run(["refresh"] + selector, extra: ["PORTAL_AUTH_STORE": "keyring"])
        #expect(after.status == 0, "\(after)")
    }
}

/// A Secret Service that never answers (gnome-keyring-daemon stopped with SIGSTOP) must not make a command outlast
/// its `--timeout` (issue 25): every keyring call counts against it. The time limit given (2 s) is shorter than the
/// keyring's own per-call limits (3 s for the probe, 15 s per item), so what the messages say shows which ended the
/// wait, without measuring time.
@Suite("A hung keyring and --timeout (gnome-keyring)", .serialized, .enabled(if: TestServer.isConfigured))
struct HungKeyringDeadlineTests {
    let server: TestServer

    init() throws { server = try TestServer.current() }

    @Test("status, a forced-keyring token and iap login with --timeout 2 end by the command's time limit, saying so")
    func stoppedDaemon() async throws {
        let home = try KeyringScratch.onPrivateKeyring()
        let keyring = home.keyring
        try await home.signIn(.iap, server: server)
        try keyring.pauseDaemon(true)
        defer { try? keyring.pauseDaemon(false) }
        let selector = ["--iap", server.iapConfig]

        let status = try await home.run(["status", "--timeout", "2"])
        #expect(status.status == 70, "the only sign-in's keyring cannot be reached (issue 45): \(status)")
        #expect(
            status.stderr.contains("cannot be reached now") && status.stderr.contains("time limit (--timeout)"),
            "\(status)")

        let token = try await home.run(["token", "--store", "keyring", "--timeout", "2"] + selector)
        #expect(token.status == 70, "\(token)")
        #expect(token.stderr.contains("time limit (--timeout)") && token.stderr.contains("--store file"), "\(token)")

        let login = try await home.run([
            "iap", "login", "--config", server.iapConfig, "--browser-command", "true", "--timeout", "2",
        ])
        #expect(login.status == 75, "\(login)")
        #expect(
            login.stderr.contains("cannot be read now") && login.stderr.contains("time limit (--timeout)"), "\(login)")
        #expect(try home.indexEntry(.iap).value["keyring"] != nil, "the sign-in stays in the keyring")
    }
}
