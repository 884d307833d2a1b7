import Foundation
import Testing
@testable import PortalAuth
import PortalAuthTesting

/// Honest logout (issue 35, item 8): "confirmed" only with the provider's evidence — the return to the loopback with
/// the logout's `state`, and, where the provider's UserInfo endpoint can be asked, the sign-in's access token refused
/// there afterwards; a refresh token left valid is reported with where and until when.
@Suite("Logout evidence and the refresh token left valid")
struct LogoutEvidenceTests {
    typealias Fakes = SignOutFakes
    static let userInfoURL = URL(string: "https://idp.example.com/oauth2/userinfo")!
    static let revokeURL = URL(string: "https://idp.example.com/oauth2/revoke")!

    /// A provider whose discovery advertises UserInfo (answering `userInfoStatus`) and, when `revokes`, revocation.
    static func provider(userInfoStatus: Int, revokes: Bool = false) -> Fakes.HTTP {
        Fakes.HTTP { request, _ in
            switch request.url {
            case Fakes.discoveryURL:
                let revocation = revokes ? #","revocation_endpoint":"https://idp.example.com/oauth2/revoke""# : ""
                return Fakes.response(
                    body: """
                        {"issuer":"https://idp.example.com/oauth2","authorization_endpoint":"https://idp.example.com/oauth2/authorize",
                         "userinfo_endpoint":"https://idp.example.com/oauth2/userinfo"\(revocation)}
                        """, url: request.url)
            case userInfoURL:
                return Fakes.response(
                    status: userInfoStatus, body: userInfoStatus == 200 ? #"{"sub":"alice"}"# : "", url: request.url)
            default:
                return Fakes.response(body: "", url: request.url)
            }
        }
    }

    @Test(
        "a return while the access token still works at UserInfo is no confirmation (LemonLDAP::NG without its cookie)")
    func returnWithoutEvidence() async throws {
        let http = Self.provider(userInfoStatus: 200)
        let result = try await Fakes.iapCredential(http: http).logOut(
            settings: Fakes.settings(http: http, browser: Fakes.Browser.redirectingBack()))
        #expect(!result.isSessionEndConfirmed)
        let why = try #require(result.returnWithoutEvidence)
        #expect(why.contains("still works at its UserInfo endpoint"), "\(why)")
        #expect(!why.contains("ACCESS-SECRET"))
        let bearer = http.requests.first { $0.url == Self.userInfoURL }?.headers["Authorization"]
        #expect(bearer == "Bearer ACCESS-SECRET", "the sign-in's own access token is what is checked")
    }

    @Test("a return after which UserInfo refuses the access token is confirmed", arguments: [401, 403])
    func confirmedByRefusal(status: Int) async throws {
        let http = Self.provider(userInfoStatus: status)
        let result = try await Fakes.iapCredential(http: http).logOut(
            settings: Fakes.settings(http: http, browser: Fakes.Browser.redirectingBack()))
        #expect(result.isSessionEndConfirmed)
        #expect(result.returnWithoutEvidence == nil)
    }

    @Test("no return: not confirmed, and UserInfo is not asked")
    func noReturn() async throws {
        let http = Self.provider(userInfoStatus: 401)
        let result = try await Fakes.iapCredential(http: http)
            .logOut(settings: Fakes.settings(http: http, browser: Fakes.Browser(), timeout: .milliseconds(200)))
        #expect(!result.isSessionEndConfirmed && result.returnWithoutEvidence == nil)
        #expect(!http.requests.contains { $0.url == Self.userInfoURL })
    }

    @Test("the revocation comes after the UserInfo check (a revocation first would make any logout look confirmed)")
    func revocationAfterCheck() async throws {
        let http = Self.provider(userInfoStatus: 200, revokes: true)
        let result = try await Fakes.iapCredential(http: http).logOut(
            settings: Fakes.settings(http: http, browser: Fakes.Browser.redirectingBack()))
        let order = http.requests.map(\.url).filter { $0 == Self.userInfoURL || $0 == Self.revokeURL }
        #expect(order == [Self.userInfoURL, Self.revokeURL])
        #expect(result.revocation == .revoked && !result.refreshTokenStaysValid)
    }

    @Test("without a revocation endpoint the refresh token stays valid: where, and until its expiry when known")
    func refreshTokenLeft() async throws {
        let http = Self.provider(userInfoStatus: 401)
        var record = Fakes.record(.iap)
        let expiry = Date(timeIntervalSince1970: 1_900_000_000)
        record.refreshTokenExpiresAt = expiry
        let result = try await Fakes.iapCredential(record, http: http).logOut(
            settings: Fakes.settings(http: http, browser: Fakes.Browser.redirectingBack()))
        #expect(result.revocation == .notOffered)
        #expect(result.refreshTokenStaysValid)
        #expect(result.refreshTokenExpiry == expiry)
        #expect(result.tokenEndpoint == record.tokenURL)

        let none = Self.provider(userInfoStatus: 401)
        let withoutRefresh = try await Fakes.iapCredential(Fakes.record(.iap, refreshToken: nil), http: none)
            .logOut(settings: Fakes.settings(http: none, browser: Fakes.Browser.redirectingBack()))
        #expect(!withoutRefresh.refreshTokenStaysValid, "no refresh token, nothing left valid")
    }

    /// Settings of a machine where no browser logout can run: an SSH session without a display, no terminal.
    static func headless(_ http: Fakes.HTTP) -> SignInSettings {
        var settings = Fakes.settings(http: http, browser: Fakes.Browser.redirectingBack())
        settings.environment = SignInEnvironment(hasDisplay: false, isSSHSession: true, hasForwardedDisplay: false)
        settings.acceptsPastedRedirect = false
        return settings
    }

    @Test(
        "no browser logout can run here (no browser can be seen, no terminal): the refresh token is revoked all the same, no browser is opened, and the result says the browser session stays (issue 45)"
    )
    func headlessRevokes() async throws {
        let http = Self.provider(userInfoStatus: 401, revokes: true)
        let credential = Fakes.iapCredential(http: http)
        let browser = Fakes.Browser.redirectingBack()
        var settings = Self.headless(http)
        settings.browser = browser
        #expect(IAPCredential.browserLogoutUnavailable(settings: settings) != nil)
        let result = try await credential.logOut(settings: settings)
        #expect(browser.urls.isEmpty, "no browser")
        let revocation = try #require(http.requests.first { $0.url == Self.revokeURL })
        #expect(Fakes.fields(of: revocation)["token"] == "REFRESH-SECRET")
        #expect(result.revocation == .revoked && !result.refreshTokenStaysValid)
        #expect(!result.isSessionEndConfirmed && !result.isComplete)
        let reason = try #require(result.browserLogoutSkipped)
        #expect(reason.contains("SSH"), "\(reason)")
        #expect(result.accessTokenExpiry != nil)
        let left = result.stillValid(now: Date())
        #expect(left.first?.contains("the browser session at the identity provider") == true, "\(left)")
        #expect(left.contains { $0.contains("the last access token until") }, "\(left)")
        #expect(!left.contains { $0.contains("refresh token") }, "revoked: not left valid")
        await #expect(throws: CredentialError.self) { _ = try await credential.tokenInfo }

        settings.acceptsPastedRedirect = true
        #expect(
            IAPCredential.browserLogoutUnavailable(settings: settings) == nil,
            "on a terminal the address is pasted back")
    }

    @Test("no browser here and no revocation endpoint: the refresh token left valid is named, where and until when")
    func headlessNothingRevocable() async throws {
        let http = Self.provider(userInfoStatus: 401)
        var record = Fakes.record(.iap)
        record.refreshTokenExpiresAt = Date(timeIntervalSince1970: 1_900_000_000)
        let result = try await Fakes.iapCredential(record, http: http).logOut(settings: Self.headless(http))
        #expect(result.revocation == .notOffered && result.refreshTokenStaysValid)
        let left = result.stillValid(now: Date()).joined(separator: "; ")
        #expect(
            left.contains("the refresh token at https://idp.example.com/oauth2/token until 2030-03-17T17:46:40Z"),
            "\(left)")
        #expect(left.contains("offers no revocation endpoint"), "\(left)")
        #expect(!left.contains("SECRET"))
    }
}
