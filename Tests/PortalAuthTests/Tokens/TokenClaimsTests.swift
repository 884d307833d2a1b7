import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthCore

/// `TokenClaims`: the facts a JWT states about itself, decoded for people (never the token or its signature).
@Suite("Token claims")
struct TokenClaimsTests {
    /// A compact JWS with `header` and `payload` (JSON texts) and a dummy signature.
    static func jwt(header: String = #"{"alg":"RS256","typ":"JWT"}"#, payload: String) -> String {
        Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(payload.utf8)) + ".c2lnbmF0dXJl"
    }

    @Test("an ID token: issuer, audiences, authorized party, subject, times and the header's alg and typ")
    func idToken() throws {
        let token = Self.jwt(
            payload: #"""
                {"iss":"https://idp.example/realms/r","aud":["app","api"],"azp":"app","sub":"u-1","iat":1763780000,
                 "nbf":1763779990,"exp":1763780300,"nonce":"n","scope":"openid profile"}
                """#)
        let claims = try #require(TokenClaims(jwt: token))
        #expect(claims.issuer == "https://idp.example/realms/r")
        #expect(claims.audiences == ["app", "api"])
        #expect(claims.authorizedParty == "app")
        #expect(claims.subject == "u-1")
        #expect(claims.scopes == ["openid", "profile"])
        #expect(claims.issuedAt == Date(timeIntervalSince1970: 1_763_780_000))
        #expect(claims.notBefore == Date(timeIntervalSince1970: 1_763_779_990))
        #expect(claims.expirationDate == Date(timeIntervalSince1970: 1_763_780_300))
        #expect(claims.algorithm == "RS256")
        #expect(claims.type == "JWT")
        #expect(claims.clientID == nil)
    }

    @Test(
        "an access token: one audience as a string, client_id, and Entra's scp as a string or an array",
        arguments: [
            (#""scp":"user_impersonation Files.Read""#, ["user_impersonation", "Files.Read"]),
            (#""scp":["user_impersonation","Files.Read"]"#, ["user_impersonation", "Files.Read"]),
            (#""scope":"read write","scp":"ignored""#, ["read", "write"]),
            (#""other":1"#, []),
        ])
    func accessToken(scopeMember: String, scopes: [String]) throws {
        let token = Self.jwt(
            header: #"{"alg":"ES256","typ":"at+jwt"}"#,
            payload: #"{"aud":"https://api.example","client_id":"c1",\#(scopeMember)}"#)
        let claims = try #require(TokenClaims(jwt: token))
        #expect(claims.audiences == ["https://api.example"])
        #expect(claims.clientID == "c1")
        #expect(claims.scopes == scopes)
        #expect(claims.type == "at+jwt")
        #expect(claims.issuer == nil && claims.expirationDate == nil)
    }

    @Test(
        "not a JWT: an opaque token, an encrypted JWT (five parts), a payload that is not JSON",
        arguments: [
            "opaque-ArcGIS-token_1234567890",
            "a.b.c.d.e",
            "eyJhbGciOiJub25lIn0.bm90IGpzb24.",
            "eyJhbGciOiJub25lIn0.W10.",  // a JSON array, not an object
            "",
        ])
    func notAJWT(token: String) {
        #expect(TokenClaims(jwt: token) == nil)
    }

    @Test("times that are not finite numbers within range are left out, never a trap")
    func outOfRangeTimes() throws {
        let claims = try #require(TokenClaims(jwt: Self.jwt(payload: #"{"exp":1e300,"iat":"yesterday","nbf":-1e16}"#)))
        #expect(claims.expirationDate == nil && claims.issuedAt == nil && claims.notBefore == nil)
    }
}
