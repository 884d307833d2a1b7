import Foundation
import Testing
@testable import PortalAuth
import PortalAuthTesting
@testable import PortalAuthTransport

/// Reading the device authorization response, and finding the endpoint (explicit, Entra, discovery).
@Suite("Device authorization response and endpoint")
struct DeviceAuthorizationTests {
    private func parse(_ body: String) throws(DeviceCodeError) -> DeviceAuthorization {
        let response = TransportResponse(
            statusCode: 200, headers: [("Content-Type", "application/json")], body: Data(body.utf8),
            url: FakeIdentityProvider.deviceURL)
        return try DeviceAuthorization.parse(response, endpoint: FakeIdentityProvider.deviceURL)
    }

    @Test("a complete answer; interval defaults to 5 s; Microsoft's verification_url spelling is read too")
    func reads() throws {
        let full = try parse(
            #"{"device_code":"dc-secret","user_code":"AB-12","verification_uri":"https://idp.example/device","verification_uri_complete":"https://idp.example/device?user_code=AB-12","expires_in":900,"interval":3}"#
        )
        #expect(full.userCode == "AB-12")
        #expect(full.verificationURLComplete?.absoluteString == "https://idp.example/device?user_code=AB-12")
        #expect(full.interval == .seconds(3))
        #expect(full.expiresIn == .seconds(900))
        #expect(!full.description.contains("dc-secret"))
        let legacy = try parse(
            #"{"device_code":"d","user_code":"U","verification_url":"https://microsoft.com/devicelogin","expires_in":"900"}"#
        )
        #expect(legacy.verificationURL.absoluteString == "https://microsoft.com/devicelogin")
        #expect(legacy.interval == .seconds(5))
    }

    @Test(
        "unusable answers are refused with the reason",
        arguments: [
            (#"{"user_code":"U","verification_uri":"https://x.example/d","expires_in":60}"#, "device_code is missing"),
            (
                #"{"device_code":"d","user_code":"U\u001b[31m","verification_uri":"https://x.example/d","expires_in":60}"#,
                "control characters"
            ),
            (
                #"{"device_code":"d","user_code":"U","verification_uri":"http://evil.example/d","expires_in":60}"#,
                "not an https address"
            ),
            (
                #"{"device_code":"d","user_code":"U","verification_uri":"https://x.example/d\u001b]","expires_in":60}"#,
                "not an https address"
            ),
            (
                #"{"device_code":"d","user_code":"U","verification_uri":"https://x.example/d","expires_in":0}"#,
                "expires_in"
            ),
            (#"[1]"#, "not a JSON object"),
        ])
    func refuses(body: String, reason: String) {
        let thrown = #expect(throws: DeviceCodeError.self) { try parse(body) }
        #expect(thrown?.description.contains(reason) == true, "\(String(describing: thrown))")
        #expect(thrown?.category == .invalidContent)
    }

    @Test("Microsoft Entra: …/oauth2/v2.0/devicecode beside the authorize endpoint")
    func entra() {
        let authorize = URL(
            string: "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/authorize?foo=1")!
        #expect(
            DeviceAuthorizationEndpoint.entra(authorize)?.absoluteString
                == "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/devicecode")
        #expect(DeviceAuthorizationEndpoint.entra(URL(string: "https://idp.example/oauth2/v2.0/authorize")!) == nil)
    }

    @Test(
        "discovery: the device endpoint counts only when the document names the same authorize endpoint; explicit wins")
    func discovery() async {
        let client = FakeIdentityProvider().client()
        let found = await DeviceAuthorizationEndpoint.resolve(
            explicit: nil, authorizeURL: FakeIdentityProvider.authorizeURL, httpClient: client)
        #expect(found == FakeIdentityProvider.deviceURL)
        let other = await DeviceAuthorizationEndpoint.resolve(
            explicit: nil, authorizeURL: URL(string: "https://idp.example/o/other-authorize/")!, httpClient: client)
        #expect(other == nil)
        var without = FakeIdentityProvider()
        without.offersDeviceCode = false
        #expect(
            await DeviceAuthorizationEndpoint.resolve(
                explicit: nil, authorizeURL: FakeIdentityProvider.authorizeURL, httpClient: without.client()) == nil)
        let explicit = URL(string: "https://idp.example/custom/device")!
        #expect(
            await DeviceAuthorizationEndpoint.resolve(
                explicit: explicit, authorizeURL: FakeIdentityProvider.authorizeURL, httpClient: client) == explicit)
    }

    @Test(
        "the configured issuer's document gives the device endpoint, as it gives the sign-in's (issue 43.1: one rule), not a walk"
    )
    func configuredIssuer() async throws {
        let authorize = URL(string: "https://auth.example/oauth2/authorize")!
        let client = ScriptedHTTPClient { _, request in
            let body: String
            switch request.url.absoluteString {
            case "https://issuer.example/pool/.well-known/openid-configuration":
                body = """
                    {"issuer":"https://issuer.example/pool","authorization_endpoint":"https://auth.example/oauth2/authorize",
                     "device_authorization_endpoint":"https://auth.example/oauth2/device"}
                    """
            case "https://auth.example/oauth2/.well-known/openid-configuration":
                // A document of another issuer at the walk's first stop.
                body = """
                    {"issuer":"https://evil.example","authorization_endpoint":"https://auth.example/oauth2/authorize",
                     "device_authorization_endpoint":"https://evil.example/device"}
                    """
            default:
                return TransportResponse(statusCode: 404, headers: [], body: Data(), url: request.url)
            }
            return TransportResponse(
                statusCode: 200, headers: [("Content-Type", "application/json")], body: Data(body.utf8),
                url: request.url)
        }
        let found = await DeviceAuthorizationEndpoint.resolve(
            explicit: nil, authorizeURL: authorize, issuer: URL(string: "https://issuer.example/pool")!,
            httpClient: client)
        #expect(found?.absoluteString == "https://auth.example/oauth2/device")
        #expect(!client.requests.contains { $0.url.host == "evil.example" })
    }
}
