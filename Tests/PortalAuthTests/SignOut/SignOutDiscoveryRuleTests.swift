import Foundation
import Testing
@testable import PortalAuth
import PortalAuthTesting
@testable import PortalAuthCore

/// Issue 43, item 1: one rule for every use of a discovery document — the sign-out's too. Only the document of the
/// sign-in's issuer (fetched at that issuer's own address, naming exactly that issuer and the sign-in's authorize
/// endpoint) is read, and only its https (or loopback) endpoints receive a token.
@Suite("Sign-out uses only the sign-in's issuer's discovery document")
struct SignOutDiscoveryRuleTests {
    typealias Fakes = SignOutFakes
    static let issuer = "https://idp.example.com"

    /// The sign-in's issuer's genuine document at the origin, and `firstStop` at the authorize URL's folder, the
    /// first place a walk up from the authorize URL looks. Every other request gets an empty 200.
    static func provider(firstStop: String, genuine: String? = nil) -> Fakes.HTTP {
        Fakes.HTTP { request, _ in
            switch request.url.absoluteString {
            case Fakes.discoveryURL.absoluteString:
                return Fakes.response(body: firstStop, url: request.url)
            case issuer + "/.well-known/openid-configuration":
                return Fakes.response(
                    body: genuine
                        ?? """
                        {"issuer":"\(issuer)","authorization_endpoint":"\(Fakes.authorizeURL.absoluteString)",
                         "userinfo_endpoint":"\(issuer)/oauth2/userinfo","revocation_endpoint":"\(issuer)/oauth2/revoke"}
                        """, url: request.url)
            default:
                return Fakes.response(
                    status: request.url.path.hasSuffix("userinfo") ? 401 : 200, body: "", url: request.url)
            }
        }
    }

    /// A sign-in of `https://idp.example.com` as an entry written before the issuer was kept: its ID token's `iss`.
    static func record() -> StoredCredential {
        var record = Fakes.record(.iap)
        record.idToken = IAPSessionLogoutTests.idToken(["iss": issuer, "sub": "alice", "aud": "iap-client"])
        record.issuer = nil
        return record
    }

    static func logOut(_ http: Fakes.HTTP, record: StoredCredential = record()) async throws -> IAPLogoutResult {
        try await Fakes.iapCredential(record, http: http).logOut(
            settings: Fakes.settings(http: http, browser: Fakes.Browser.redirectingBack()))
    }

    @Test(
        "a forged document of another issuer at the walk's first stop gets neither the access token (UserInfo) nor the refresh token (revocation)"
    )
    func forgedDocumentAtFirstStop() async throws {
        let forged = """
            {"issuer":"https://evil.example.net","authorization_endpoint":"\(Fakes.authorizeURL.absoluteString)",
             "userinfo_endpoint":"https://evil.example.net/userinfo","revocation_endpoint":"https://evil.example.net/revoke"}
            """
        let http = Self.provider(firstStop: forged)
        let result = try await Self.logOut(http)
        #expect(!http.requests.contains { $0.url.host == "evil.example.net" }, "\(http.requests.map(\.url))")
        // The sign-in's own issuer's document is used instead: its revocation endpoint gets the refresh token.
        let revoked = http.requests.first { $0.url.absoluteString == Self.issuer + "/oauth2/revoke" }
        #expect(revoked.map(Fakes.fields(of:))?["token"] == "REFRESH-SECRET")
        #expect(result.revocation == .revoked)
        // With the issuer kept in the record (new sign-ins), the same.
        var kept = Self.record()
        kept.issuer = Self.issuer
        let again = Self.provider(firstStop: forged)
        _ = try await Self.logOut(again, record: kept)
        #expect(!again.requests.contains { $0.url.host == "evil.example.net" })
    }

    @Test("the issuer's own document, once its issuer changed, is not used; nor are its plain-http endpoints")
    func changedIssuerAndPlainHTTP() async throws {
        let changed = Self.provider(
            firstStop: "{}",
            genuine: """
                {"issuer":"https://other.example.org","authorization_endpoint":"\(Fakes.authorizeURL.absoluteString)",
                 "revocation_endpoint":"https://other.example.org/revoke"}
                """)
        let result = try await Self.logOut(changed)
        #expect(!changed.requests.contains { $0.url.host == "other.example.org" })
        #expect(result.revocation == .notOffered)

        let plain = Self.provider(
            firstStop: "{}",
            genuine: """
                {"issuer":"\(Self.issuer)","authorization_endpoint":"\(Fakes.authorizeURL.absoluteString)",
                 "userinfo_endpoint":"http://idp.example.com/oauth2/userinfo","revocation_endpoint":"http://idp.example.com/oauth2/revoke"}
                """)
        _ = try await Self.logOut(plain)
        #expect(!plain.requests.contains { $0.url.scheme == "http" }, "\(plain.requests.map(\.url))")
    }

    @Test(
        "Microsoft Entra: no document is read at sign-out (no revocation endpoint; Graph's UserInfo says nothing of it)"
    )
    func entraReadsNothing() async throws {
        var record = Self.record()
        let tenant = "https://login.microsoftonline.com/3f2504e0-4f89-41d3-9a0c-0305e82c3301"
        record.authorizeURL = URL(string: tenant + "/oauth2/v2.0/authorize")
        record.issuer = tenant + "/v2.0"
        record.logoutURL = Fakes.logoutURL
        let http = Fakes.HTTP { request, _ in Fakes.response(body: "{}", url: request.url) }
        let result = try await Self.logOut(http, record: record)
        #expect(
            !http.requests.contains {
                $0.url.host == "login.microsoftonline.com" || $0.url.host == "graph.microsoft.com"
            })
        #expect(result.revocation == .notOffered && result.refreshTokenStaysValid)
    }
}
