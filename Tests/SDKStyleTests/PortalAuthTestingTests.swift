import Foundation
import PortalAuth
import PortalAuthTesting
import Synchronization
import Testing

/// An app's own tests, written with the `PortalAuthTesting` product the way a user would: the identity provider is a
/// `ScriptedHTTPClient`, time is a `ManualClock`, and nothing touches the network or waits.
@Suite("PortalAuthTesting in an app's tests", .timeLimit(.minutes(1)))  // a hang guard, never reached in a passing run
struct PortalAuthTestingTests {
    static let issuer = "https://idp.example/o"
    static let clientID = "my-app"
    static let noDisplay = SignInEnvironment(hasDisplay: false, isSSHSession: false, hasForwardedDisplay: false)

    static func configuration() throws -> IAPConfiguration {
        try IAPConfiguration.configuration(
            authorizeURL: URL(string: "\(issuer)/authorize/")!, tokenURL: URL(string: "\(issuer)/token/")!,
            logoutURL: URL(string: "\(issuer)/logout/")!, clientID: clientID,
            redirectURL: URL(string: "http://127.0.0.1/callback")!,
            scopes: ["openid", "offline_access"], hostsBehindProxy: ["app.example"])
    }

    /// An unsigned ID token (`alg: none`) as the token endpoint returns it: accepted only because the provider's
    /// discovery document lists `none` and the token endpoint is https (an ID token is otherwise refused unless its
    /// signature verifies with the keys at the document's `jwks_uri`).
    static func idToken(issuedAt: Date) -> String {
        func base64URL(_ text: String) -> String {
            Data(text.utf8).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(
                    of: "=", with: "")
        }
        let iat = Int(issuedAt.timeIntervalSince1970)
        let payload =
            #"{"iss":"\#(issuer)","aud":"\#(clientID)","sub":"42","preferred_username":"alice","iat":\#(iat),"exp":\#(iat + 3600)}"#
        return base64URL(#"{"alg":"none","typ":"JWT"}"#) + "." + base64URL(payload) + "."
    }

    /// The provider's answers: discovery, a device code (5 s interval, valid `expiresIn` seconds), `pending` polls
    /// answered `authorization_pending`, then tokens; a refresh gets `access-2`.
    static func provider(clock: ManualClock, pending: Int, expiresIn: Int = 600) -> ScriptedHTTPClient {
        let tokenPolls = TokenPolls(pending: pending)
        return ScriptedHTTPClient { _, request in
            switch request.url.absoluteString {
            case "\(issuer)/.well-known/openid-configuration":
                return try ScriptedHTTPClient.json(
                    #"""
                    {"issuer":"\#(issuer)","authorization_endpoint":"\#(issuer)/authorize/","token_endpoint":"\#(issuer)/token/",
                     "device_authorization_endpoint":"\#(issuer)/device/","id_token_signing_alg_values_supported":["none"]}
                    """#
                ).get()
            case "\(issuer)/device/":
                return try ScriptedHTTPClient.json(
                    #"""
                    {"device_code":"device-secret","user_code":"WDJB-MJHT","verification_uri":"\#(issuer)/activate",
                     "expires_in":\#(expiresIn),"interval":5}
                    """#
                ).get()
            case "\(issuer)/token/":
                let form = String(decoding: request.body ?? Data(), as: UTF8.self)
                if form.contains("grant_type=refresh_token") {
                    return try ScriptedHTTPClient.tokens("access-2", refresh: "refresh-2").get()
                }
                if tokenPolls.next() {
                    return try ScriptedHTTPClient.json(#"{"error":"authorization_pending"}"#, status: 400).get()
                }
                return try ScriptedHTTPClient.json(
                    #"""
                    {"access_token":"access-1","refresh_token":"refresh-1","expires_in":3600,"token_type":"Bearer",
                     "id_token":"\#(idToken(issuedAt: clock.now))"}
                    """#
                ).get()
            default:
                return TransportResponse(statusCode: 404, body: Data(), url: request.url)
            }
        }
    }

    @Test(
        "a device-code sign-in polls on the manual clock, takes no real time, and a forced refresh gets the scripted tokens"
    )
    func deviceCodeSignInAndRefresh() async throws {
        let clock = ManualClock(start: Date())
        let start = clock.now
        let client = Self.provider(clock: clock, pending: 2)
        let settings = SignInSettings(
            browser: nil, observer: ShowsDeviceCode(), httpClient: client, clock: clock, environment: Self.noDisplay)

        let credential = try await IAPCredential.credential(
            for: Self.configuration(), using: .deviceCode, settings: settings)

        // One wait of the server's interval before each of the three polls, all on the manual clock.
        #expect(clock.sleeps == [.seconds(5), .seconds(5), .seconds(5)])
        #expect(clock.now == start.addingTimeInterval(15))
        #expect(credential.username == "alice")
        let signedIn = try await credential.tokenInfo(minimumValidity: nil)
        #expect(signedIn.accessToken == "access-1")
        // The lifetime counts from when the tokens came, by the injected clock.
        #expect(signedIn.accessTokenExpirationDate == clock.now.addingTimeInterval(3600))
        let pollForms = client.forms.filter { $0["grant_type"] == "urn:ietf:params:oauth:grant-type:device_code" }
        #expect(pollForms.count == 3)
        #expect(pollForms.allSatisfy { $0["device_code"] == "device-secret" && $0["client_id"] == Self.clientID })

        let refreshed = try await credential.tokenInfo(minimumValidity: nil, forceRefresh: true)
        #expect(refreshed.accessToken == "access-2")
        #expect(refreshed.refreshToken == "refresh-2")
        let refreshForm = try #require(client.forms.last)
        #expect(refreshForm["grant_type"] == "refresh_token")
        #expect(refreshForm["refresh_token"] == "refresh-1")
    }

    @Test("a device code nobody approves expires on the manual clock: DeviceCodeError, at once")
    func deviceCodeExpires() async throws {
        let clock = ManualClock(start: Date())
        let client = Self.provider(clock: clock, pending: .max, expiresIn: 12)
        let settings = SignInSettings(
            browser: nil, observer: ShowsDeviceCode(), httpClient: client, clock: clock, environment: Self.noDisplay)

        let thrown = await #expect(throws: DeviceCodeError.self) {
            try await IAPCredential.credential(for: Self.configuration(), using: .deviceCode, settings: settings)
        }
        #expect(thrown?.isExpired == true)
        // Polls at 5 s and 10 s were pending; the wait to 15 s passed the code's 12 s.
        #expect(clock.sleeps == [.seconds(5), .seconds(5), .seconds(5)])
        #expect(client.forms.filter { $0["grant_type"] == "urn:ietf:params:oauth:grant-type:device_code" }.count == 2)
    }
}

/// How many token polls are still answered `authorization_pending`.
private final class TokenPolls: Sendable {
    private let left: Mutex<Int>
    init(pending: Int) { left = Mutex(pending) }

    /// Whether this poll is answered pending.
    func next() -> Bool {
        left.withLock { left in
            guard left > 0 else { return false }
            left -= 1
            return true
        }
    }
}

/// An app's observer that shows the device code (a device-code sign-in nobody is shown fails at once); these tests
/// approve it through the scripted provider instead of a person.
struct ShowsDeviceCode: SignInObserver {
    func deviceCodeIssued(_ authorization: DeviceAuthorization) {}
}
