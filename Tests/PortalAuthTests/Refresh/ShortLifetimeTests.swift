import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthCore
import PortalAuthTesting
@testable import PortalAuthStore

/// Tokens the provider issues for less than the validity asked (20-second access tokens, 30-second ID tokens against
/// the default 300 s): the one rule of `TokenFreshness`, on a `ManualClock`, so that every step happens at a time the
/// test sets.
@Suite("Short-lived tokens: one freshness rule, one refresh per half lifetime")
struct ShortLifetimeTests {
    static let margin: Duration = .seconds(300)

    // MARK: - The rule

    @Test(
        "fresh: more than the minimum left, or a token shorter than the minimum in the first half of its lifetime",
        arguments: [
            // (lifetime, age, minimum, issue time recorded, fresh)
            (20.0, 0.0, 300, true, true), (20, 9, 300, true, true), (20, 10, 300, true, false),
            (20, 19, 300, true, false),
            (20, 25, 300, true, false), (30, 14, 300, true, true), (30, 15, 300, true, false),
            (300, 149, 300, true, true), (300, 150, 300, true, false),
            (3600, 3298, 300, true, true), (3600, 3300, 300, true, false), (3600, 3599, 300, true, false),
            (20, 0, 300, false, false), (3600, 0, 300, false, true),
            (20, 19, 0, true, true), (20, 20, 0, true, false),
            (20, -0.5, 300, true, true),
        ] as [(Double, Double, Int, Bool, Bool)])
    func rule(lifetime: Double, age: Double, minimum: Int, recorded: Bool, fresh: Bool) {
        let issued = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(
            TokenFreshness.isFresh(
                issuedAt: recorded ? issued : nil, expiresAt: issued.addingTimeInterval(lifetime),
                minimumValidity: .seconds(minimum),
                now: issued.addingTimeInterval(age)) == fresh)
    }

    // MARK: - Fixtures

    /// An IAP or portal record whose access token was issued at `clock.now` for `accessLifetime` seconds, and (IAP)
    /// whose ID token was issued then for `idLifetime` seconds.
    static func record(
        _ kind: CredentialKind = .iap, clock: ManualClock, accessLifetime: TimeInterval, idLifetime: TimeInterval? = nil
    ) -> StoredCredential {
        var record = TokenKeeperTests.record(
            kind, accessLeft: accessLifetime, refreshLeft: nil, refreshIssuedAgo: nil, now: clock.now)
        record.accessTokenIssuedAt = clock.now
        // The scripted provider's ID tokens are unsigned: it says it signs with none over TLS (ID tokens fail closed).
        record.signsIDTokensWithNone = true
        if let idLifetime {
            record.idToken = idToken("ID-1", issued: clock.now, lifetime: idLifetime)
            record.idTokenExpiresAt = clock.now.addingTimeInterval(idLifetime)
            record.idTokenIssuedAt = clock.now
        }
        return record
    }

    /// An unsigned ID token of `TokenKeeperTests.record`'s client, told apart by `id` (its `jti`).
    static func idToken(_ id: String, issued: Date, lifetime: TimeInterval, audience: String = "client-1") -> String {
        let payload = IDTokenTests.payload(
            aud: .string(audience), nonce: nil,
            exp: issued.addingTimeInterval(lifetime).timeIntervalSince1970.rounded(.down),
            iss: "https://idp.example/o", iat: issued.timeIntervalSince1970.rounded(.down))
        guard case .object(var object) = payload else { return "" }
        object["jti"] = .string(id)
        return IDTokenTests.token(.object(object))
    }

    /// A token response with `access` for `expiresIn` seconds and, when given, `idToken`.
    static func tokens(_ access: String, expiresIn: Int, idToken: String? = nil) -> Result<TransportResponse, any Error>
    {
        var object: JSONObject = [
            "access_token": .string(access), "expires_in": .integer(Int64(expiresIn)), "token_type": .string("Bearer"),
        ]
        if let idToken { object["id_token"] = .string(idToken) }
        return ScriptedHTTPClient.json(JSONValue.object(object).serialized(indent: 0))
    }

    /// A token endpoint that answers every refresh with a new access token for `accessLifetime` seconds and, with
    /// `idLifetime`, a new ID token issued at the clock's time; tokens numbered from 2.
    static func provider(clock: ManualClock, accessLifetime: Int, idLifetime: TimeInterval? = nil) -> ScriptedHTTPClient
    {
        ScriptedHTTPClient { index, _ in
            let idToken = idLifetime.map { Self.idToken("ID-\(index + 2)", issued: clock.now, lifetime: $0) }
            return try Self.tokens("access-\(index + 2)", expiresIn: accessLifetime, idToken: idToken).get()
        }
    }

    // MARK: - One process

    @Test(
        "20-second access tokens: handed out for their first 10 s, then one refresh; never a refresh per call",
        arguments: [CredentialKind.oauthUser, .iap])
    func twentySecondAccessTokens(kind: CredentialKind) async throws {
        let clock = ManualClock()
        let client = Self.provider(clock: clock, accessLifetime: 20)
        let keeper = TokenKeeperTests.keeper(Self.record(kind, clock: clock, accessLifetime: 20), client)
        var seen: [(String, Int)] = []
        // A call every second for 25 s.
        for _ in 0..<25 {
            let token = try await keeper.validCredential(minimumValidity: Self.margin, now: { clock.now }).accessToken
            seen.append((token, client.count))
            clock.advance(by: .seconds(1))
        }
        // Refreshed at 10 s and 20 s: the first half of each token's life.
        #expect(
            seen.map(\.0) == Array(repeating: "access-1", count: 10) + Array(repeating: "access-2", count: 10)
                + Array(repeating: "access-3", count: 5))
        #expect(client.count == 2)
        // The new token's issue time is recorded, so the rule holds for it as it did for the first.
        #expect(keeper.current.accessTokenIssuedAt == clock.now.addingTimeInterval(-5))
    }

    @Test("long tokens are unchanged: refreshed when they have the minimum validity left, not at half their life")
    func longTokensUnchanged() async throws {
        let clock = ManualClock()
        let client = Self.provider(clock: clock, accessLifetime: 3600)
        let keeper = TokenKeeperTests.keeper(Self.record(clock: clock, accessLifetime: 3600), client)
        clock.advance(by: .seconds(1800))
        #expect(
            try await keeper.validCredential(now: { clock.now }).accessToken == "access-1",
            "half its life gone, 1800 s left")
        clock.advance(by: .seconds(1499))
        #expect(try await keeper.validCredential(now: { clock.now }).accessToken == "access-1", "301 s left")
        clock.advance(by: .seconds(1))
        #expect(try await keeper.validCredential(now: { clock.now }).accessToken == "access-2", "300 s left")
        #expect(client.count == 1)
    }

    @Test("30-second ID tokens asked for: the refresh's new ID token is handed out, and kept for its first 15 s")
    func thirtySecondIDTokens() async throws {
        let clock = ManualClock()
        let client = Self.provider(clock: clock, accessLifetime: 3600, idLifetime: 30)
        let keeper = TokenKeeperTests.keeper(Self.record(clock: clock, accessLifetime: 3600, idLifetime: 30), client)
        func idToken() async throws -> String? {
            try await keeper.validCredential(minimumValidity: Self.margin, keeping: .idToken, now: { clock.now })
                .idToken
        }
        let first = try await idToken()
        clock.advance(by: .seconds(14))
        #expect(try await idToken() == first)
        #expect(client.count == 0)
        clock.advance(by: .seconds(1))
        let second = try #require(try await idToken())
        #expect(second != first)
        #expect(second == Self.idToken("ID-2", issued: clock.now, lifetime: 30))
        #expect(client.count == 1)
        clock.advance(by: .seconds(14))
        #expect(try await idToken() == second)
        #expect(client.count == 1)
    }

    @Test(
        "a refresh without a new ID token says so; with one, nothing is said; with a refused one, the refusal is said",
        arguments: [
            ("none", "the identity provider sent no new one"), ("new", nil), ("refused", "was refused"),
        ] as [(String, String?)])
    func idTokenMessageIsTrue(answer: String, says: String?) async throws {
        let clock = ManualClock()
        let keeper = TokenKeeperTests.keeper(
            Self.record(clock: clock, accessLifetime: 3600, idLifetime: 30),
            ScriptedHTTPClient { _, _ in
                let idToken: String? =
                    switch answer {
                    case "none": nil
                    case "new": Self.idToken("ID-2", issued: clock.now, lifetime: 30)
                    default: Self.idToken("ID-2", issued: clock.now, lifetime: 30, audience: "another-client")
                    }
                return try Self.tokens("access-2", expiresIn: 3600, idToken: idToken).get()
            })
        clock.advance(by: .seconds(20))
        do {
            let fresh = try await keeper.validCredential(
                minimumValidity: Self.margin, keeping: .idToken, now: { clock.now })
            #expect(says == nil, "no error for \(answer)")
            #expect(fresh.idToken == Self.idToken("ID-2", issued: clock.now, lifetime: 30))
        } catch let error as CredentialError {
            let says = try #require(says, "\(error)")
            #expect(error.requiresSignIn)
            #expect(error.description.contains(says), "\(error)")
            #expect(answer == "none" || !error.description.contains("sent no new one"), "\(error)")
        }
        #expect(keeper.current.accessToken == "access-2")
    }

    // MARK: - Several processes

    @Test(
        "a keeper loaded before another refreshed a 20-second token takes that token from the store, seconds later: no second refresh"
    )
    func secondProcessSeconds() async throws {
        let clock = ManualClock()
        let record = Self.record(clock: clock, accessLifetime: 20)
        let (temporary, store) = try await TokenKeeperTests.seeded(with: record)
        defer { withExtendedLifetime(temporary) {} }
        let first = Self.provider(clock: clock, accessLifetime: 20)
        let second = Self.provider(clock: clock, accessLifetime: 20)
        let keeperA = TokenKeeperTests.persisted(record, in: store, first)
        let keeperB = TokenKeeperTests.persisted(record, in: store, second)
        clock.advance(by: .seconds(12))
        #expect(try await keeperA.validCredential(now: { clock.now }).accessToken == "access-2")
        // Three seconds later (beyond the "refreshed while waiting for the lock" second of slack) B, still holding the
        // first token (past its half life), asks: the stored token is 3 s old, in its first half.
        clock.advance(by: .seconds(3))
        #expect(try await keeperB.validCredential(now: { clock.now }).accessToken == "access-2")
        #expect(first.count == 1 && second.count == 0)
    }

    @Test(
        "keepers on one store racing for an expired short token: one refresh request, one token",
        arguments: [false, true])
    func racingShortTokens(idToken: Bool) async throws {
        let clock = ManualClock()
        let record = Self.record(clock: clock, accessLifetime: 20, idLifetime: 30)
        let (temporary, store) = try await TokenKeeperTests.seeded(with: record)
        defer { withExtendedLifetime(temporary) {} }
        clock.advance(by: .seconds(40))
        let clients = (0..<6).map { _ in Self.provider(clock: clock, accessLifetime: 20, idLifetime: 30) }
        let keepers = clients.map { TokenKeeperTests.persisted(record, in: store, $0) }
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for keeper in keepers {
                group.addTask {
                    let fresh = try await keeper.validCredential(
                        keeping: idToken ? .idToken : .accessToken, now: { clock.now })
                    return fresh.accessToken + " " + (fresh.idToken ?? "")
                }
            }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(clients.map(\.count).reduce(0, +) == 1)
        #expect(tokens.count == 1)
        #expect(try TokenKeeperTests.stored(record, in: store)?.accessTokenIssuedAt == clock.now)
    }

    // MARK: - Telling it once

    @Test(
        "the short lifetime is told once per sign-in and lifetime, across keepers of one store; a new sign-in tells it again"
    )
    func toldOnce() async throws {
        let clock = ManualClock()
        let record = Self.record(clock: clock, accessLifetime: 20, idLifetime: 30)
        let (temporary, store) = try await TokenKeeperTests.seeded(with: record)
        defer { withExtendedLifetime(temporary) {} }
        let client = ScriptedHTTPClient([])
        let keeperA = TokenKeeperTests.persisted(record, in: store, client)
        let keeperB = TokenKeeperTests.persisted(record, in: store, client)
        #expect(await keeperA.firstShortLifetimeNotice(for: .accessToken, minimumValidity: Self.margin) == 20)
        #expect(await keeperA.firstShortLifetimeNotice(for: .accessToken, minimumValidity: Self.margin) == nil)
        #expect(
            await keeperB.firstShortLifetimeNotice(for: .accessToken, minimumValidity: Self.margin) == nil,
            "the other process told it")
        #expect(
            await keeperB.firstShortLifetimeNotice(for: .idToken, minimumValidity: Self.margin) == 30,
            "the ID token is its own notice")
        #expect(
            await keeperA.firstShortLifetimeNotice(for: .accessToken, minimumValidity: .seconds(20)) == nil,
            "not shorter than asked")
        let reloaded = try #require(try TokenKeeperTests.stored(record, in: store))
        #expect(reloaded.shortLifetimesNoted == ["access_token": 20, "id_token": 30])
        // A new sign-in writes a new record: told again.
        let (temporary2, store2) = try await TokenKeeperTests.seeded(with: record)
        defer { withExtendedLifetime(temporary2) {} }
        #expect(
            await TokenKeeperTests.persisted(record, in: store2, client).firstShortLifetimeNotice(
                for: .accessToken, minimumValidity: Self.margin) == 20)
        #expect(client.count == 0)
    }
}
