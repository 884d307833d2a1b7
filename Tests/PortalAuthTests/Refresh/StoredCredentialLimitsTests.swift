import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthCore

/// Out-of-range numbers in a hand-edited or damaged store entry: read as absent, never a trap
/// (both were found by the stored-credential fuzz target; see `Fixtures/fuzz/stored-credential/regressions/`).
@Suite("Stored credential: numbers out of range")
struct StoredCredentialLimitsTests {
    static func entry(_ changes: [String: JSONValue]) -> JSONValue {
        var object: JSONObject = [
            "kind": .string("oauth-user"), "client_id": .string("c"),
            "portal_url": .string("https://portal.example/arcgis"),
            "redirect_url": .string("http://127.0.0.1/callback"),
            "token_url": .string("https://portal.example/arcgis/sharing/rest/oauth2/token"),
            "access_token": .string("AT"),
            "access_token_expires_at": .integer(1_763_780_000), "refresh_token_expiration_minutes": .integer(20160),
        ]
        for (key, value) in changes { object[key] = value }
        return .object(object)
    }

    @Test(
        "an access-token expiry that is not a finite time within 1e15 s makes the entry unreadable",
        arguments: [JSONValue.number(1e300), .number(-1.8e29), .number(1.000_001e15), .string("1763780000")])
    func unreadableExpiry(value: JSONValue) {
        #expect(StoredCredential(json: Self.entry(["access_token_expires_at": value])) == nil)
    }

    @Test("optional timestamps out of range are read as absent; the entry writes and reads back")
    func optionalTimestamps() throws {
        let record = try #require(
            StoredCredential(
                json: Self.entry([
                    "refresh_token_expires_at": .number(1e300), "id_token_expires_at": .number(-1e300),
                    "updated_at": .number(9e18),
                ])))
        #expect(record.refreshTokenExpiresAt == nil)
        #expect(record.idTokenExpiresAt == nil)
        #expect(record.updatedAt == Date(timeIntervalSince1970: 0))
        #expect(StoredCredential(json: record.json) == record)
    }

    @Test(
        "a refresh-token lifetime in minutes that would overflow as seconds falls back to the default",
        arguments: [Int64.max, Int64(Int32.max) + 1, 0, -5])
    func overflowingMinutes(minutes: Int64) throws {
        let record = try #require(
            StoredCredential(json: Self.entry(["refresh_token_expiration_minutes": .integer(minutes)])))
        #expect(record.refreshTokenExpirationMinutes == nil)
        // Rebuilding the credential (as loading the store does) used to trap on 60 × minutes.
        let credential = OAuthUserCredential(record: record, persistence: nil, settings: SignInSettings(browser: nil))
        #expect(credential.configuration.refreshTokenExpirationInterval == .seconds(20160 * 60))
    }

    @Test("the largest kept lifetime still converts")
    func largestMinutes() throws {
        let record = try #require(
            StoredCredential(json: Self.entry(["refresh_token_expiration_minutes": .integer(Int64(Int32.max))])))
        #expect(record.refreshTokenExpirationMinutes == Int(Int32.max))
        _ = OAuthUserCredential(record: record, persistence: nil, settings: SignInSettings(browser: nil))
    }

    @Test("a date computed beyond the limit is written clamped, so it reads back")
    func writeClamps() throws {
        var record = try #require(StoredCredential(json: Self.entry([:])))
        record.accessTokenExpiresAt = Date(timeIntervalSince1970: 1e300)
        #expect(record.json["access_token_expires_at"] == .integer(Int64(StoredCredential.timestampLimit)))
        #expect(StoredCredential(json: record.json) != nil)
    }
}
