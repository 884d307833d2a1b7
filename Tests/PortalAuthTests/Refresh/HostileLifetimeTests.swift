import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthCore
import PortalAuthTesting
@testable import PortalAuthStore
@testable import PortalAuthTransport

/// Refresh answers with hostile lifetimes (issue 43, item 4) and a refused refresh token (issue 45): never a token
/// known to be expired, or past half its lifetime, handed out; a new refresh token stored whenever the provider issued
/// one, even when the rest of its answer is refused; a sign-in whose refresh token was refused hands out nothing.
@Suite("Hostile token lifetimes and refused refresh tokens")
struct HostileLifetimeTests {
    static let margin: Duration = .seconds(300)

    /// A token answer with `refresh-2` and `expires_in` as the JSON text `expiresIn`.
    static func answer(expiresIn: String, refresh: String? = "refresh-2", access: String = "access-2")
        -> Result<TransportResponse, any Error>
    {
        let refreshMember = refresh.map { #","refresh_token":"\#($0)""# } ?? ""
        return ScriptedHTTPClient.json(
            #"{"access_token":"\#(access)","token_type":"Bearer","expires_in":\#(expiresIn)\#(refreshMember)}"#)
    }

    // MARK: - Expired on arrival

    @Test(
        "expires_in 0: the access token is not handed out (unavailable, saying why); the new refresh token is stored",
        arguments: [false, true])
    func expiresInZero(persisted: Bool) async throws {
        let record = TokenKeeperTests.record(.iap)
        let (temporary, store) = try await TokenKeeperTests.seeded(with: record)
        _ = temporary
        let client = ScriptedHTTPClient([Self.answer(expiresIn: "0")])
        let keeper =
            persisted
            ? TokenKeeperTests.persisted(record, in: store, client) : TokenKeeperTests.keeper(record, client)
        let error = try await #require(throws: CredentialError.self) { try await keeper.validCredential() }
        #expect(error.category == .unavailable && !error.requiresSignIn, "\(error)")
        #expect("\(error)".contains("expired as it was issued"), "\(error)")
        #expect(!"\(error)".contains("access-2") && !"\(error)".contains("refresh-2"), "a token in the message")
        #expect(keeper.current.refreshToken == "refresh-2")
        if persisted { #expect(try TokenKeeperTests.stored(record, in: store)?.refreshToken == "refresh-2") }
        #expect(client.count == 1)
    }

    @Test("a refresh asked with no minimum validity (portal-auth refresh) hands out no token that expired as it came")
    func forcedRefreshExpiresInZero() async throws {
        let keeper = TokenKeeperTests.keeper(
            TokenKeeperTests.record(accessLeft: 3600), ScriptedHTTPClient([Self.answer(expiresIn: "0")]))
        await #expect(throws: CredentialError.self) {
            try await keeper.validCredential(minimumValidity: .zero, force: true)
        }
    }

    // MARK: - 1-second tokens

    @Test(
        "1-second tokens: handed out when the answer took less than half a second, not when it took 0.6 s",
        arguments: [(0.1, true), (0.4, true), (0.6, false), (1.2, false)])
    func oneSecondAnswerTime(took: Double, handedOut: Bool) async throws {
        let clock = ManualClock()
        let client = ScriptedHTTPClient { _, _ in
            clock.advance(by: .milliseconds(Int64(took * 1000)))
            return try Self.answer(expiresIn: "1").get()
        }
        let keeper = TokenKeeperTests.keeper(
            ShortLifetimeTests.record(.iap, clock: clock, accessLifetime: 1), client)
        clock.advance(by: .seconds(1))
        do {
            let credential = try await keeper.validCredential(minimumValidity: Self.margin, now: { clock.now })
            #expect(handedOut, "handed out with \(credential.accessTokenExpiresAt.timeIntervalSince(clock.now)) s left")
            #expect(credential.accessToken == "access-2")
        } catch {
            #expect(!handedOut, "\(error)")
            #expect((error as? CredentialError)?.category == .unavailable, "\(error)")
        }
    }

    @Test("a 1-second token's times read back from the store to the millisecond: its first half is where it was")
    func oneSecondTokenThroughTheStore() throws {
        let issued = Date(timeIntervalSince1970: 1_800_000_000.6)
        var record = TokenKeeperTests.record(.iap, accessLeft: 1, now: issued)
        record.accessTokenIssuedAt = issued
        let readBack = try #require(StoredCredential(json: record.json))
        #expect(abs(readBack.accessTokenIssuedAt!.timeIntervalSince(issued)) < 0.001)
        #expect(abs(readBack.accessTokenExpiresAt.timeIntervalSince(issued.addingTimeInterval(1))) < 0.001)
        // 0.45 s after the issue: fresh. 0.6 s after: past half (with whole seconds, 1_800_000_001 and …002 were
        // stored, and the token looked 0.2 s old, with 0.4 s left in truth).
        #expect(!TokenKeeper.needsRefresh(readBack, margin: Self.margin, now: issued.addingTimeInterval(0.45)))
        #expect(TokenKeeper.needsRefresh(readBack, margin: Self.margin, now: issued.addingTimeInterval(0.6)))
        // Whole seconds stay integers in the file.
        record.accessTokenIssuedAt = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(record.json["access_token_issued_at"] == .integer(1_800_000_000))
    }

    @Test("a token another process refreshed, gone past half its lifetime while this one waited: refreshed again")
    func refreshedMeanwhileButStale() async throws {
        let clock = ManualClock()
        let record = ShortLifetimeTests.record(.iap, clock: clock, accessLifetime: 1)
        let (temporary, store) = try await TokenKeeperTests.seeded(with: record)
        _ = temporary
        // Another process refreshed at the clock's time; 0.8 s pass before this one reads the store.
        var other = record
        other.accessToken = "access-other"
        other.accessTokenIssuedAt = clock.now
        other.accessTokenExpiresAt = clock.now.addingTimeInterval(1)
        other.updatedAt = clock.now
        clock.advance(by: .milliseconds(800))
        try await store.update { if case .object(let entry) = other.json { $0.set(entry, for: record.key) } }
        let client = ScriptedHTTPClient([Self.answer(expiresIn: "1", access: "access-3")])
        let keeper = TokenKeeperTests.persisted(record, in: store, client)
        let credential = try await keeper.validCredential(minimumValidity: Self.margin, now: { clock.now })
        #expect(credential.accessToken == "access-3", "the other process's token had 0.2 s of 1 s left")
        #expect(client.count == 1)
    }

    // MARK: - A refused answer that rotated the refresh token

    @Test(
        "a refresh answer refused for its expires_in (or its access token) still has its refresh token stored",
        arguments: [
            #"{"access_token":"access-2","expires_in":"soon","refresh_token":"refresh-2"}"#,
            #"{"access_token":"access-2","expires_in":-5,"refresh_token":"refresh-2"}"#,
            #"{"access_token":"access\u001b[2","expires_in":60,"refresh_token":"refresh-2"}"#,
            #"{"access_token":"access-2","expires_in":60,"refresh_token":"refresh-2","refresh_token_expires_in":"x","ssl":7}"#,
        ])
    func refusedAnswerKeepsRotatedRefreshToken(body: String) async throws {
        let record = TokenKeeperTests.record(.iap)
        let (temporary, store) = try await TokenKeeperTests.seeded(with: record)
        _ = temporary
        let client = ScriptedHTTPClient([ScriptedHTTPClient.json(body), ScriptedHTTPClient.tokens("access-3")])
        let keeper = TokenKeeperTests.persisted(record, in: store, client)
        let error = try await #require(throws: TokenEndpointError.self) { try await keeper.validCredential() }
        #expect(error.kind == .invalidResponse)
        let stored = try #require(try TokenKeeperTests.stored(record, in: store))
        #expect(stored.refreshToken == "refresh-2", "the rotated refresh token was dropped")
        #expect(stored.accessToken == "access-1", "the refused answer's access token was kept")
        #expect(keeper.current.refreshToken == "refresh-2")
        // The next refresh sends the new one.
        #expect(try await keeper.validCredential().accessToken == "access-3")
        #expect(client.forms.last?["refresh_token"] == "refresh-2")
    }

    @Test("an answer refused without a usable refresh token in it changes nothing stored")
    func refusedAnswerWithoutRefreshToken() async throws {
        let record = TokenKeeperTests.record(.iap)
        let (temporary, store) = try await TokenKeeperTests.seeded(with: record)
        _ = temporary
        for body in [
            #"{"access_token":"access-2","expires_in":"soon"}"#,
            #"{"access_token":"access-2","expires_in":"soon","refresh_token":"bad\u001b[2"}"#,
        ] {
            let keeper = TokenKeeperTests.persisted(
                record, in: store, ScriptedHTTPClient([ScriptedHTTPClient.json(body)]))
            await #expect(throws: TokenEndpointError.self) { try await keeper.validCredential() }
            let stored = try TokenKeeperTests.stored(record, in: store)
            #expect(stored?.refreshToken == "refresh-1" && stored?.accessToken == "access-1", "\(body)")
        }
    }

    // MARK: - A refused refresh token: one truth with status

    @Test(
        "a sign-in whose refresh token was refused hands out nothing, even a valid access token; nothing is sent",
        arguments: [false, true])
    func refusedSignInHandsOutNothing(persisted: Bool) async throws {
        var record = TokenKeeperTests.record(.iap, accessLeft: 3600)
        record.refreshTokenRefusal = "invalid_grant"
        let (temporary, store) = try await TokenKeeperTests.seeded(with: record)
        _ = temporary
        let client = ScriptedHTTPClient([ScriptedHTTPClient.tokens("access-2")])
        let keeper =
            persisted
            ? TokenKeeperTests.persisted(record, in: store, client) : TokenKeeperTests.keeper(record, client)
        let error = try await #require(throws: CredentialError.self) { try await keeper.validCredential() }
        #expect(error.requiresSignIn && "\(error)".contains("invalid_grant"), "\(error)")
        #expect(client.count == 0, "the refused refresh token was sent again")
        #expect(!CredentialSummary(record).isUsable(at: Date()), "status says the same")
    }

    @Test("a new sign-in stored by another process replaces the refused one: its tokens are handed out")
    func newSignInAfterRefusal() async throws {
        var record = TokenKeeperTests.record(.iap, accessLeft: 3600)
        record.refreshTokenRefusal = "invalid_grant"
        let (temporary, store) = try await TokenKeeperTests.seeded(with: record)
        _ = temporary
        let keeper = TokenKeeperTests.persisted(record, in: store, ScriptedHTTPClient([]))
        var signedIn = TokenKeeperTests.record(.iap, access: "access-new", accessLeft: 3600, refresh: "refresh-new")
        signedIn.accessTokenIssuedAt = Date()
        try await store.update { if case .object(let entry) = signedIn.json { $0.set(entry, for: record.key) } }
        #expect(try await keeper.validCredential().accessToken == "access-new")
    }

    // MARK: - --timeout

    @Test("a refresh request outlasts the client's overall deadline once sent; other token requests do not")
    func refreshOutlastsDeadline() async throws {
        let client = ScriptedHTTPClient([Self.answer(expiresIn: "3600")])
        let keeper = TokenKeeperTests.keeper(TokenKeeperTests.record(), client)
        _ = try await keeper.validCredential()
        #expect(client.requests.first?.outlastsDeadline == true)
        #expect(
            TokenRequest(tokenURL: ScriptedHTTPClient.tokenURL, grant: .refreshToken("r"), clientID: "c")
                .transportRequest.outlastsDeadline == false)
    }
}
