import Foundation
import Synchronization
import Testing
@testable import PortalAuth
import PortalAuthTesting
@testable import PortalAuthStore
@testable import PortalAuthTransport

/// `TokenKeeper` against a scripted token endpoint: when it refreshes, what it keeps, how it retries,
/// and that concurrent callers — tasks of one process or keepers sharing a store file — send one request.
@Suite("Token keeper: refresh, rotation, exchange, retries, coalescing")
struct TokenKeeperTests {
    // MARK: - Fixtures

    static let portal = URL(string: "https://gis.example/portal")!

    /// A stored credential whose access token has `accessLeft` seconds left.
    static func record(
        _ kind: CredentialKind = .oauthUser, access: String = "access-1", accessLeft: TimeInterval = -10,
        refresh: String? = "refresh-1", refreshLeft: TimeInterval? = 14 * 86400, refreshIssuedAgo: TimeInterval? = 0,
        exchangeSeconds: Int? = 86400, expirationMinutes: Int? = 20160, now: Date = Date()
    ) -> StoredCredential {
        StoredCredential(
            kind: kind, clientID: "client-1", portalURL: kind == .oauthUser ? portal : nil,
            redirectURL: URL(string: "http://127.0.0.1/callback")!,
            refreshTokenExpirationMinutes: kind == .oauthUser ? expirationMinutes : nil,
            refreshTokenExchangeSeconds: kind == .oauthUser ? exchangeSeconds : nil,
            configurationFile: kind == .iap ? "/etc/iap.json" : nil,
            authorizeURL: URL(string: "https://idp.example/oauth2/authorize"), tokenURL: ScriptedHTTPClient.tokenURL,
            revokeURL: nil, logoutURL: kind == .iap ? URL(string: "https://idp.example/oauth2/logout") : nil,
            hostsBehindProxy: kind == .iap ? ["*.contoso.com"] : [],
            username: "alice", accessToken: access, accessTokenExpiresAt: now.addingTimeInterval(accessLeft),
            refreshToken: refresh, refreshTokenExpiresAt: refreshLeft.map { now.addingTimeInterval($0) },
            refreshTokenIssuedAt: refreshIssuedAgo.map { now.addingTimeInterval(-$0) },
            idToken: nil, idTokenExpiresAt: nil, scopes: kind == .iap ? ["openid", "offline_access"] : [],
            tokenType: "Bearer", isSSLRequired: false, createdAt: now, updatedAt: now.addingTimeInterval(-3600))
    }

    /// A policy with short pauses so that retry tests run fast.
    static let quick = RefreshPolicy(
        attempts: 3, initialBackoff: .milliseconds(20), maximumBackoff: .milliseconds(30), attemptTimeout: .seconds(5))

    static func keeper(
        _ record: StoredCredential, _ client: ScriptedHTTPClient, policy: RefreshPolicy = quick,
        persistence: TokenKeeper.Persistence? = nil
    ) -> TokenKeeper {
        TokenKeeper(
            record, persistence: persistence, httpClient: client, policy: policy, target: "the portal \(portal)")
    }

    // MARK: - When to refresh

    @Test("a token with more than the margin left is handed out without a request")
    func validTokenNoRequest() async throws {
        let client = ScriptedHTTPClient([ScriptedHTTPClient.tokens("access-2")])
        let keeper = Self.keeper(Self.record(accessLeft: 301), client)
        #expect(try await keeper.validCredential().accessToken == "access-1")
        #expect(client.count == 0)
    }

    @Test(
        "the 5-minute margin: 299 s left refreshes, and the new expiry counts from when the request left",
        arguments: [299.0, 0, -3600])
    func withinMarginRefreshes(left: Double) async throws {
        let client = ScriptedHTTPClient(
            delay: .milliseconds(300), [ScriptedHTTPClient.tokens("access-2", expiresIn: 3600)])
        let keeper = Self.keeper(Self.record(accessLeft: left), client)
        let called = Date()
        let fresh = try await keeper.validCredential()
        #expect(fresh.accessToken == "access-2")
        #expect(client.count == 1)
        // Answered 0.3 s after it arrived: the expiry counts from before the arrival, not from the answer.
        let arrived = try #require(client.arrivals.first)
        #expect(fresh.accessTokenExpiresAt.timeIntervalSince(arrived) <= 3600)
        #expect(fresh.accessTokenExpiresAt.timeIntervalSince(called) >= 3600)
    }

    @Test("minimumValidity overrides the margin; force refreshes a valid token")
    func minimumValidityAndForce() async throws {
        let client = ScriptedHTTPClient([ScriptedHTTPClient.tokens("access-2"), ScriptedHTTPClient.tokens("access-3")])
        let keeper = Self.keeper(Self.record(accessLeft: 1000), client)
        #expect(try await keeper.validCredential(minimumValidity: .seconds(900)).accessToken == "access-1")
        #expect(try await keeper.validCredential(minimumValidity: .seconds(1200)).accessToken == "access-2")
        #expect(try await keeper.validCredential(force: true).accessToken == "access-3")
        #expect(client.count == 2)
    }

    // MARK: - Rotation

    @Test("rotation: the newest refresh token is kept and the old one is sent only once")
    func rotation() async throws {
        let client = ScriptedHTTPClient([
            ScriptedHTTPClient.tokens("access-2", refresh: "refresh-2"),
            ScriptedHTTPClient.tokens("access-3", refresh: "refresh-3"),
        ])
        let keeper = Self.keeper(Self.record(.iap), client)
        let first = try await keeper.validCredential()
        #expect(first.refreshToken == "refresh-2")
        #expect(first.refreshTokenExpiresAt == nil, "a rotated token's expiry is unknown unless the server says it")
        _ = try await keeper.validCredential(force: true)
        #expect(keeper.current.refreshToken == "refresh-3")
        #expect(client.forms.map { $0["refresh_token"] } == ["refresh-1", "refresh-2"])
        #expect(client.forms.allSatisfy { $0["grant_type"] == "refresh_token" && $0["client_id"] == "client-1" })
        #expect(client.forms.first?["scope"] == nil, "RFC 6749 §6: no scope, so never more than was granted")
    }

    @Test("an answer without a refresh token keeps the old one, its expiry and its age")
    func keepOldWhenNoneSent() async throws {
        let now = Date()
        let record = Self.record(refreshLeft: 10 * 86400, now: now)
        let client = ScriptedHTTPClient([ScriptedHTTPClient.tokens("access-2")])
        let fresh = try await Self.keeper(record, client).validCredential()
        #expect(fresh.accessToken == "access-2")
        #expect(fresh.refreshToken == "refresh-1")
        #expect(fresh.refreshTokenExpiresAt == record.refreshTokenExpiresAt)
        #expect(fresh.refreshTokenIssuedAt == record.refreshTokenIssuedAt)
        #expect(fresh.username == "alice")
    }

    // MARK: - ArcGIS exchange

    @Test("a refresh token older than the exchange interval is exchanged, even while the access token is valid")
    func exchangeTriggered() async throws {
        let client = ScriptedHTTPClient([
            ScriptedHTTPClient.tokens("access-2", refresh: "refresh-2", refreshExpiresIn: 14 * 86400)
        ])
        let keeper = Self.keeper(
            Self.record(accessLeft: 3000, refreshLeft: 12 * 86400, refreshIssuedAgo: 2 * 86400), client)
        let called = Date()
        let fresh = try await keeper.validCredential()
        let arrived = Date()
        let form = try #require(client.forms.first)
        #expect(form["grant_type"] == "exchange_refresh_token")
        #expect(form["redirect_uri"] == "http://127.0.0.1/callback")
        #expect(form["refresh_token"] == "refresh-1")
        #expect(fresh.refreshToken == "refresh-2")
        // Stamped while the call ran, however long this machine took: between the clock read before and after it.
        let issued = try #require(fresh.refreshTokenIssuedAt)
        #expect(issued >= called.addingTimeInterval(-0.001) && issued <= arrived.addingTimeInterval(0.001))
        let expires = try #require(fresh.refreshTokenExpiresAt)
        #expect(
            expires >= called.addingTimeInterval(14 * 86400 - 0.001)
                && expires <= arrived.addingTimeInterval(14 * 86400 + 0.001))
        // The new refresh token is young: the next call sends nothing.
        _ = try await keeper.validCredential()
        #expect(client.count == 1)
    }

    @Test(
        "exchange by age",
        arguments: [
            // (refresh-token seconds left, issued seconds ago (nil: not recorded), exchange interval, minutes asked, exchanged?)
            (12 * 86400.0, 2 * 86400.0, 86400, 20160, true),
            (13 * 86400.0 + 3700, 23 * 3600.0, 86400, 20160, false),
            // Entries without the issue time: the age counts from the expiry minus the lifetime asked for.
            (12 * 86400.0, nil, 86400, 20160, true),
            (13.5 * 86400, nil, 86400, 20160, false),
            // The portal granted 7 days of the 14 asked: the fresh token is not exchanged again at once.
            (7 * 86400.0, 0, 86400, 20160, false),
            (5 * 86400.0, 2 * 86400.0, 86400, 20160, true),
            // An interval longer than the lifetime (60 min): exchanged at half-life, not never, not always.
            (40 * 60.0, 20 * 60.0, 86400, 60, false),
            (25 * 60.0, 35 * 60.0, 86400, 60, true),
            // Nothing known of the lifetime: exchanged within the interval of expiring.
            (3600.0, nil, 86400, 0, true),
        ] as [(Double, Double?, Int, Int, Bool)])
    func exchangeByAge(left: Double, issuedAgo: Double?, interval: Int, minutes: Int, exchanged: Bool) {
        let record = Self.record(
            accessLeft: 3000, refreshLeft: left, refreshIssuedAgo: issuedAgo, exchangeSeconds: interval,
            expirationMinutes: minutes == 0 ? nil : minutes)
        #expect(TokenKeeper.needsExchange(record, now: Date()) == exchanged)
    }

    @Test("IAP credentials never exchange")
    func iapNeverExchanges() {
        var record = Self.record(refreshLeft: 60, refreshIssuedAgo: 14 * 86400)
        #expect(TokenKeeper.needsExchange(record, now: Date()))
        record.kind = .iap
        #expect(!TokenKeeper.needsExchange(record, now: Date()))
    }

    // MARK: - Dead refresh token

    @Test(
        "a dead refresh token is reported at once, distinctly, without retrying or echoing a token",
        arguments: [
            (
                "OIDC invalid_grant", ScriptedHTTPClient.json(#"{"error":"invalid_grant"}"#, status: 400),
                "invalid_grant"
            ),
            (
                "portal 498",
                ScriptedHTTPClient.json(
                    #"{"error":{"code":498,"error":"invalid_grant","error_description":"refresh_token expired","message":"refresh_token expired","details":[]}}"#
                ), "refresh_token expired"
            ),
            (
                "portal 400",
                ScriptedHTTPClient.json(
                    #"{"error":{"code":400,"error":"invalid_grant","message":"Invalid refresh_token","details":[]}}"#),
                "Invalid refresh_token"
            ),
            ("Glewlwyd 400 with an empty body", ScriptedHTTPClient.json("", status: 400), "HTTP 400"),
            (
                "401 with an HTML page",
                ScriptedHTTPClient.json("<html><title>Unauthorized</title></html>", status: 401), "HTTP 401"
            ),
        ] as [(String, Result<TransportResponse, any Error>, String)])
    func deadRefreshToken(name: String, answer: Result<TransportResponse, any Error>, mentions: String) async throws {
        let client = ScriptedHTTPClient([answer])
        let keeper = Self.keeper(Self.record(access: "secret-access", refresh: "secret-refresh"), client)
        let error = try await #require(throws: CredentialError.self) { try await keeper.validCredential() }
        #expect(client.count == 1, "\(name): no retry")
        #expect(error.requiresSignIn)
        #expect(error.category == .refused)
        #expect(error.description.contains(mentions))
        #expect(error.description.contains("sign in again"))
        #expect(!error.description.contains("secret-"))
        #expect(keeper.current.refreshToken == "secret-refresh", "nothing is dropped locally")
    }

    @Test("no refresh token: a sign-in is required, nothing is sent")
    func noRefreshToken() async throws {
        let client = ScriptedHTTPClient([ScriptedHTTPClient.tokens("access-2")])
        let error = try await #require(throws: CredentialError.self) {
            try await Self.keeper(Self.record(refresh: nil), client).validCredential()
        }
        #expect(error.requiresSignIn)
        #expect(client.count == 0)
    }

    // MARK: - Transient failures

    @Test(
        "failures before the provider used the token are retried with growing, bounded pauses, then reported as unavailable",
        arguments: [
            ("503", ScriptedHTTPClient.json(#"{"error":"temporarily_unavailable"}"#, status: 503)),
            ("connection refused", ScriptedHTTPClient.unreachable(.cannotConnect)),
            ("unknown host", ScriptedHTTPClient.unreachable(.cannotResolveHost)),
            ("429", ScriptedHTTPClient.json(#"{}"#, status: 429)),
        ] as [(String, Result<TransportResponse, any Error>)])
    func transientFailures(name: String, answer: Result<TransportResponse, any Error>) async throws {
        let client = ScriptedHTTPClient([answer])
        let policy = RefreshPolicy(
            attempts: 4, initialBackoff: .milliseconds(40), maximumBackoff: .milliseconds(60),
            attemptTimeout: .seconds(5))
        #expect(policy.backoffs == [.milliseconds(40), .milliseconds(60), .milliseconds(60)])
        let keeper = Self.keeper(Self.record(refresh: "secret-refresh"), client, policy: policy)
        let error = try await #require(throws: CredentialError.self) { try await keeper.validCredential() }
        #expect(client.count == 4, "\(name)")
        // Each pause was taken (a busy machine may stretch it; it cannot shorten it).
        #expect(zip(client.gaps, policy.backoffs).allSatisfy { $0 >= $1 }, "\(client.gaps)")
        #expect(error.category == .unavailable)
        #expect(!error.requiresSignIn)
        #expect(error.description.contains("4 attempts") && error.description.contains("kept"))
        #expect(!error.description.contains("secret-"))
        #expect(keeper.current.refreshToken == "secret-refresh")
    }

    @Test("a transient failure followed by success gives the token")
    func recovers() async throws {
        let client = ScriptedHTTPClient([
            ScriptedHTTPClient.unreachable(), ScriptedHTTPClient.json("{}", status: 503),
            ScriptedHTTPClient.tokens("access-2"),
        ])
        // (Both failures certainly left the refresh token unused: nothing connected, then the provider said 503.)
        #expect(try await Self.keeper(Self.record(), client).validCredential().accessToken == "access-2")
        #expect(client.count == 3)
    }

    @Test("an endpoint that does not answer within the attempt timeout: one request (it may have arrived), unavailable")
    func attemptTimeout() async throws {
        let client = ScriptedHTTPClient(delay: .seconds(30), [ScriptedHTTPClient.tokens("access-2")])
        let policy = RefreshPolicy(attempts: 2, initialBackoff: .milliseconds(10), attemptTimeout: .milliseconds(200))
        // Each scripted answer would succeed after 30 s: only the per-attempt cut-off makes this fail.
        let error = try await #require(throws: CredentialError.self) {
            try await Self.keeper(Self.record(), client, policy: policy).validCredential()
        }
        #expect(error.category == .unavailable)
        #expect(error.description.contains("timed out"))
        #expect(client.count == 1)
    }

    @Test(
        "failures that retrying cannot fix are not retried",
        arguments: [
            ScriptedHTTPClient.unreachable(.tlsVerificationFailed),
            ScriptedHTTPClient.json("[]"),
            ScriptedHTTPClient.json("{}", status: 404),
        ])
    func notRetried(answer: Result<TransportResponse, any Error>) async throws {
        let client = ScriptedHTTPClient([answer])
        await #expect(throws: (any Error).self) { try await Self.keeper(Self.record(), client).validCredential() }
        #expect(client.count == 1)
    }

    // MARK: - Coalescing

    @Test("20 concurrent callers in one process send one request and get the same token")
    func inProcessCoalescing() async throws {
        let client = ScriptedHTTPClient(delay: .milliseconds(200)) { index, _ in
            try ScriptedHTTPClient.tokens("access-\(index + 2)").get()
        }
        let keeper = Self.keeper(Self.record(), client)
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<20 { group.addTask { try await keeper.validCredential().accessToken } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(client.count == 1)
        #expect(tokens == ["access-2"])
    }

    // MARK: - Persistent credentials

    /// A store file holding `record` under its key, and a keeper persisted in it.
    static func persisted(
        _ record: StoredCredential, in store: CredentialStoreFile, _ client: ScriptedHTTPClient,
        policy: RefreshPolicy = quick
    ) -> TokenKeeper {
        keeper(record, client, policy: policy, persistence: TokenKeeper.Persistence(store: store, key: record.key))
    }

    /// A store file in a new temporary directory, holding `record`.
    static func seeded(with record: StoredCredential) async throws -> (TemporaryDirectory, CredentialStoreFile) {
        let temporary = try TemporaryDirectory()
        let store = temporary.store()
        guard case .object(let entry) = record.json else { throw CancellationError() }
        try await store.update { $0.set(entry, for: record.key) }
        return (temporary, store)
    }

    static func stored(_ record: StoredCredential, in store: CredentialStoreFile) throws -> StoredCredential? {
        try store.read().entry(for: record.key).flatMap { StoredCredential(json: .object($0)) }
    }

    @Test("a second keeper on the same store re-reads it under the lock and sends nothing")
    func reReadUnderLock() async throws {
        let record = Self.record(.iap)
        let (temporary, store) = try await Self.seeded(with: record)
        defer { withExtendedLifetime(temporary) {} }

        let first = ScriptedHTTPClient([ScriptedHTTPClient.tokens("access-2", refresh: "refresh-2")])
        let second = ScriptedHTTPClient([ScriptedHTTPClient.tokens("access-X", refresh: "refresh-X")])
        let keeperA = Self.persisted(record, in: store, first)
        let keeperB = Self.persisted(record, in: store, second)  // loaded before A refreshed: sees the expired token
        #expect(try await keeperA.validCredential().accessToken == "access-2")
        let seenByB = try await keeperB.validCredential()
        #expect(seenByB.accessToken == "access-2")
        #expect(seenByB.refreshToken == "refresh-2")
        #expect(first.count == 1 && second.count == 0)
        #expect(try Self.stored(record, in: store)?.refreshToken == "refresh-2")
    }

    @Test("keepers racing on one store file send one request, even when tokens are shorter than the margin")
    func racingKeepers() async throws {
        let record = Self.record(.iap)
        let (temporary, store) = try await Self.seeded(with: record)
        defer { withExtendedLifetime(temporary) {} }
        // 60-second tokens, 300-second margin: a fresh token from another keeper still "needs" a refresh by the
        // margin, but it is as new as any; refreshing again would only burn the rotated refresh token.
        // The first request is answered only once every keeper has started its call (each asks the time twice
        // before it waits for the lock: the margin check, then the start of the refresh).
        let count = 6
        let clockCalls = ClockCalls(count)
        let everyoneWaits: @Sendable () async -> Void = {
            while clockCalls.calls.withLock({ $0.contains { $0 < 2 } }) { try? await Task.sleep(for: .milliseconds(5)) }
        }
        let clients = (0..<count).map { _ in
            ScriptedHTTPClient(gate: everyoneWaits) { _, _ in
                try ScriptedHTTPClient.tokens("access-\(UUID())", refresh: "refresh-\(UUID())", expiresIn: 60).get()
            }
        }
        let keepers = clients.map { Self.persisted(record, in: store, $0) }
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for (index, keeper) in keepers.enumerated() {
                group.addTask {
                    try await keeper.validCredential(now: {
                        clockCalls.calls.withLock { $0[index] += 1 }
                        return Date()
                    }).accessToken
                }
            }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(clients.map(\.count).reduce(0, +) == 1)
        #expect(tokens.count == 1)
        #expect(try Self.stored(record, in: store)?.accessToken == tokens.first)
    }

    @Test("when the provider is down the stored entry, refresh token included, is left as it was")
    func unavailableKeepsStore() async throws {
        let record = Self.record()
        let (temporary, store) = try await Self.seeded(with: record)
        defer { withExtendedLifetime(temporary) {} }
        let before = try contents(of: store.path)
        let client = ScriptedHTTPClient([ScriptedHTTPClient.json("{}", status: 503)])
        await #expect(throws: CredentialError.self) {
            try await Self.persisted(record, in: store, client).validCredential()
        }
        #expect(client.count == Self.quick.attempts)
        #expect(try contents(of: store.path) == before)
    }

    @Test("an entry removed from the store meanwhile is reported as not stored")
    func removedEntry() async throws {
        let record = Self.record()
        let (temporary, store) = try await Self.seeded(with: record)
        defer { withExtendedLifetime(temporary) {} }
        let keeper = Self.persisted(record, in: store, ScriptedHTTPClient([ScriptedHTTPClient.tokens("access-2")]))
        try await store.update { $0.removeAll() }
        let error = try await #require(throws: CredentialError.self) { try await keeper.validCredential() }
        #expect(error.requiresSignIn)
    }
}

/// How often each of several keepers asked for the time.
private final class ClockCalls: Sendable {
    let calls: Mutex<[Int]>
    init(_ count: Int) { calls = Mutex([Int](repeating: 0, count: count)) }
}
