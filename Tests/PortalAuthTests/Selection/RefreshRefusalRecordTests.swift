import Foundation
import Testing
@testable import PortalAuth
import PortalAuthTesting

/// A refresh token the provider refuses is recorded in the store, so `status` can tell it from a valid one
/// without a request; a later sign-in's refresh clears it.
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

    @Test("a successful refresh clears an earlier refusal")
    func cleared() async throws {
        var record = TokenKeeperTests.record()
        record.refreshTokenRefusal = "invalid_grant"
        let (temporary, store) = try await TokenKeeperTests.seeded(with: record)
        _ = temporary
        let keeper = TokenKeeperTests.persisted(
            record, in: store, ScriptedHTTPClient([ScriptedHTTPClient.tokens("access-2")]))
        #expect(try await keeper.validCredential().accessToken == "access-2")
        #expect(try TokenKeeperTests.stored(record, in: store)?.refreshTokenRefusal == nil)
    }
}
