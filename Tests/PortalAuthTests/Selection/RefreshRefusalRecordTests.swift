import Foundation
import Testing
@testable import PortalAuth
import PortalAuthTesting

/// A refresh token the provider refuses is recorded in the store, so `status` can tell it from a valid one
/// without a request; it stays until a new sign-in replaces the entry (the refused token is not sent again).
@Suite("Refused refresh token recorded")
struct RefreshRefusalRecordTests {
    @Test("the refusal is written to the entry and makes the summary unusable; nothing else changes")
    func recorded() async throws {
        let record = TokenKeeperTests.record(access: "secret-access", refresh: "secret-refresh")
        let (temporary, store) = try await TokenKeeperTests.seeded(with: record)
        _ = temporary
        let client = ScriptedHTTPClient([ScriptedHTTPClient.json(#"{"error":"invalid_grant"}"#, status: 400)])
        let keeper = TokenKeeperTests.persisted(record, in: store, client)
        let error = try await #require(throws: CredentialError.self) { try await keeper.validCredential() }
        #expect(error.requiresSignIn)
        let stored = try #require(try TokenKeeperTests.stored(record, in: store))
        #expect(stored.refreshTokenRefusal?.contains("invalid_grant") == true)
        #expect(stored.refreshToken == "secret-refresh" && stored.accessToken == "secret-access")
        #expect(!(stored.refreshTokenRefusal ?? "").contains("secret-"))
        let summary = CredentialSummary(stored)
        #expect(!summary.isUsable(at: Date()))
        #expect(CredentialSummary(record).isUsable(at: Date()), "the same entry before the refusal was usable")
    }

    @Test("a recorded refusal stays until a new sign-in: the refused refresh token is not sent again")
    func keptUntilSignIn() async throws {
        var record = TokenKeeperTests.record()
        record.refreshTokenRefusal = "invalid_grant"
        let (temporary, store) = try await TokenKeeperTests.seeded(with: record)
        _ = temporary
        let client = ScriptedHTTPClient([ScriptedHTTPClient.tokens("access-2")])
        let keeper = TokenKeeperTests.persisted(record, in: store, client)
        let error = try await #require(throws: CredentialError.self) { try await keeper.validCredential() }
        #expect(error.requiresSignIn)
        #expect(client.count == 0)
        #expect(try TokenKeeperTests.stored(record, in: store)?.refreshTokenRefusal == "invalid_grant")
    }
}
