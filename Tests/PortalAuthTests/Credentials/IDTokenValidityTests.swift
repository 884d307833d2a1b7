import Foundation
import Testing
@testable import PortalAuth
import PortalAuthTesting

/// The one refresh rule also keeps the ID token valid when it is the token asked for, and never hands out one that
/// is not valid for the time asked (a provider may refresh without a new ID token, OIDC Core 12.2).
@Suite("Token keeper: the ID token asked for")
struct IDTokenValidityTests {
    /// An IAP record whose access token has an hour left and whose ID token has `idLeft` seconds.
    static func record(idLeft: TimeInterval) -> StoredCredential {
        var record = TokenKeeperTests.record(.iap, accessLeft: 3600)
        record.idToken = "header.payload.signature"
        record.idTokenExpiresAt = Date().addingTimeInterval(idLeft)
        return record
    }

    @Test("an ID token about to expire is refreshed; without a new one from the provider a sign-in is needed")
    func refreshWithoutIDToken() async throws {
        let client = ScriptedHTTPClient([ScriptedHTTPClient.tokens("access-2")])
        let keeper = TokenKeeperTests.keeper(Self.record(idLeft: 30), client)
        let error = try await #require(throws: CredentialError.self) {
            try await keeper.validCredential(minimumValidity: .seconds(60), keeping: .idToken)
        }
        #expect(error.requiresSignIn)
        #expect(error.description.contains("ID token"))
        #expect(!error.description.contains("header.payload.signature"))
        #expect(client.count == 1, "one refresh was tried")
        #expect(keeper.current.accessToken == "access-2", "the refreshed access token is kept")
    }

    @Test("the access token asked for: the short ID token does not matter; a long one needs no refresh")
    func accessTokenOrLongIDToken() async throws {
        let client = ScriptedHTTPClient([ScriptedHTTPClient.tokens("access-2")])
        let short = TokenKeeperTests.keeper(Self.record(idLeft: 30), client)
        #expect(try await short.validCredential(minimumValidity: .seconds(60)).accessToken == "access-1")
        let long = TokenKeeperTests.keeper(Self.record(idLeft: 3000), client)
        #expect(
            try await long.validCredential(minimumValidity: .seconds(60), keeping: .idToken).accessToken == "access-1")
        #expect(client.count == 0)
    }

    @Test("an expired ID token with a fresh access token is refreshed too, and refused when none comes")
    func expiredIDToken() async throws {
        let client = ScriptedHTTPClient([ScriptedHTTPClient.tokens("access-2")])
        let keeper = TokenKeeperTests.keeper(Self.record(idLeft: -10), client)
        let error = try await #require(throws: CredentialError.self) {
            try await keeper.validCredential(minimumValidity: .zero, keeping: .idToken)
        }
        #expect(error.description.contains("expired"))
        #expect(client.count == 1)
    }
}
