import Foundation
import Testing
@testable import PortalAuth

/// The two kinds of sign-in the lifecycle tests run against: the portal face (`portal-auth login`) and the
/// OIDC face through an IAP configuration (`portal-auth iap login`, rotating refresh tokens).
enum SignInKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case portal
    case iap

    var description: String { rawValue }

    /// The selector words of `token` / `refresh` for this kind.
    func selector(_ server: TestServer) -> [String] {
        switch self {
        case .portal: return ["--portal", server.portal, "--client-id", server.clientID]
        case .iap: return ["--iap", server.iapConfig]
        }
    }

    /// The store entry's `kind`.
    var entryKind: String { self == .portal ? "oauth-user" : "iap" }
}

// MARK: - Test control

/// The server's `/testctl/` endpoints: statistics, forced expiry, run-time configuration.
struct TestControl {
    let server: TestServer

    /// The control of the running server, its configuration back at the start-up values (a failed test may have
    /// left a slow or failing token endpoint behind).
    static func prepared() async throws -> TestControl {
        let control = TestControl(server: try TestServer.current())
        try await control.resetConfiguration()
        return control
    }

    /// Token requests by grant type since the last reset.
    struct Stats {
        let byGrant: [String: Int]
        let total: Int
        let errors: [String: Int]
        var refreshes: Int { byGrant["refresh_token"] ?? 0 }
        var exchanges: Int { byGrant["exchange_refresh_token"] ?? 0 }
    }

    func resetStats() async throws { try await post("reset-stats") }
    func expireAccessTokens() async throws { try await post("expire-access-tokens") }
    func expireRefreshTokens() async throws { try await post("expire-refresh-tokens") }

    /// Changes the run-time configuration (`access_token_seconds`, `token_delay_ms`, `fail_next_token_requests`, …).
    func configure(_ changes: JSONObject) async throws { try await post("config", json: .object(changes)) }

    /// Back to the start-up configuration.
    func resetConfiguration() async throws {
        let response = try await CurlHTTPClient().send(TransportRequest(method: .delete, url: url("config")))
        #expect(response.statusCode == 200)
    }

    func stats() async throws -> Stats {
        let response = try await CurlHTTPClient().send(.get(url("stats")))
        let json = try JSONValue.parse(response.body)
        func counts(_ key: String) -> [String: Int] {
            Dictionary(
                uniqueKeysWithValues: (json[key]?.objectValue?.members ?? []).compactMap { member in
                    member.value.integerValue.map { (member.key, Int($0)) }
                })
        }
        return Stats(
            byGrant: counts("token_requests"), total: Int(json["token_requests_total"]?.integerValue ?? -1),
            errors: counts("token_errors"))
    }

    private func url(_ path: String) -> URL { URL(string: "\(server.testControl)/\(path)")! }

    private func post(_ path: String, json: JSONValue = .object([:])) async throws {
        let request = TransportRequest(
            method: .post, url: url(path), headers: [("Content-Type", "application/json")],
            body: Data(json.serialized().utf8))
        let response = try await CurlHTTPClient().send(request)
        #expect(response.statusCode == 200, "POST /testctl/\(path): HTTP \(response.statusCode)")
    }
}

// MARK: - Signing in and touching the store

extension ScratchStore {
    /// Signs in through the real browser with the tool, into this store.
    func signIn(_ kind: SignInKind, server: TestServer, extra: [String] = []) async throws {
        let arguments: [String] =
            switch kind {
            case .portal: ["login", "--portal", server.portal, "--client-id", server.clientID]
            case .iap: ["iap", "login", "--config", server.iapConfig]
            }
        let result = try await ToolRunner.run(
            arguments + extra + ["--browser-command", server.browser, "--timeout", "90"],
            environment: ["PORTAL_AUTH_STORE": path, "PORTAL_AUTH_TEST_BROWSER_TIMEOUT": "60"], timeout: .seconds(120))
        try #require(result.status == 0, "sign-in failed: \(result)")
    }

    /// The key and entry of the one credential of `kind`.
    func entry(_ kind: SignInKind) throws -> (key: String, value: JSONValue) {
        let found = try entries().first { $0.value["kind"]?.stringValue == kind.entryKind }
        return try #require(found, "no \(kind) entry in the store")
    }

    /// A stored token field of the `kind` entry (for checks only; the tool never prints these).
    func field(_ name: String, of kind: SignInKind) throws -> String? {
        try entry(kind).value[name]?.stringValue
    }

    /// Rewrites the `kind` entry through the library's locked, atomic update (0600 kept).
    func rewrite(_ kind: SignInKind, _ change: @escaping @Sendable (inout JSONObject) -> Void) async throws {
        let key = try entry(kind).key
        let file = CredentialStoreFile(location: StoreLocation(path: path))
        try await file.update { snapshot in
            guard var entry = snapshot.entry(for: key) else { return }
            change(&entry)
            snapshot.set(entry, for: key)
        }
    }

    /// Makes the `kind` sign-in's stored access token look issued a day ago, its expiry kept: past half its lifetime,
    /// so a `--min-valid` beyond what it has left refreshes it (a token fresher than that, shorter than `--min-valid`,
    /// is handed out in the first half of its lifetime: `TokenFreshness`).
    func ageAccessToken(_ kind: SignInKind) async throws {
        let dayAgo = Int64(Date().timeIntervalSince1970) - 86400
        try await rewrite(kind) { $0["access_token_issued_at"] = .integer(dayAgo) }
    }

    /// Makes the `kind` sign-in's access token expired, on the server and in the store (as if an hour passed).
    func expireAccessToken(_ kind: SignInKind, control: TestControl) async throws {
        try await control.expireAccessTokens()
        let past = Int64(Date().timeIntervalSince1970) - 1
        try await rewrite(kind) { $0["access_token_expires_at"] = .integer(past) }
    }
}

extension ToolRunner.Result {
    /// True when neither output stream contains any of `secrets` (outside `allowedOnStdout`).
    func leaksNone(of secrets: [String?], allowedOnStdout: String? = nil) -> Bool {
        secrets.compactMap { $0 }.filter { !$0.isEmpty }.allSatisfy { secret in
            !stderr.contains(secret) && (secret == allowedOnStdout || !stdout.contains(secret))
        }
    }
}
