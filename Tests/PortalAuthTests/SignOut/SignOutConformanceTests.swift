import Foundation
import Testing
@testable import PortalAuth
import PortalAuthTesting

/// Sign-out defects found against Glewlwyd (issue 11): logouts sharing a fixed loopback port, and a revocation the
/// provider refuses while it confirms the end of the browser session.
@Suite("Sign-out conformance: shared fixed ports, refused revocation")
struct SignOutConformanceTests {
    typealias Fakes = SignOutFakes

    /// An IAP credential whose redirect URL is `redirect`, for client `clientID` (so that two can be stored).
    static func iapCredential(clientID: String, redirect: URL, http: Fakes.HTTP) -> IAPCredential {
        var record = Fakes.record(.iap)
        record.clientID = clientID
        record.redirectURL = redirect
        return Fakes.iapCredential(record, http: http)
    }

    @Test("two IAP sign-ins whose redirect uses the same fixed port are both signed out, one after the other")
    func sharedFixedPort() async throws {
        let port = try freePort()
        let redirect = try #require(URL(string: "http://127.0.0.1:\(port)/callback"))
        let http = IAPLogoutTests.plainDiscovery
        let manager = AuthenticationManager(
            settings: Fakes.settings(http: http, browser: Fakes.Browser.redirectingBack()))
        for clientID in ["client-a", "client-b", "client-c"] {
            try await manager.arcGISCredentialStore.addAndPersist(
                Self.iapCredential(clientID: clientID, redirect: redirect, http: http))
        }
        let report = await manager.signOutReport()
        #expect(report.invalidations.count == 3)
        for entry in report.invalidations {
            #expect(entry.outcome.succeeded, "\(entry.credential.targetDescription): \(entry.outcome)")
        }
        #expect(report.succeeded)
    }

    /// Discovery advertising a revocation endpoint that answers `status` (401: public clients may not revoke).
    static func revokingProvider(status: Int) -> Fakes.HTTP {
        Fakes.HTTP { request, _ in
            if request.url == Fakes.discoveryURL {
                return Fakes.response(
                    body: """
                        {"issuer":"https://idp.example.com/oauth2","authorization_endpoint":"https://idp.example.com/oauth2/authorize",
                         "revocation_endpoint":"https://idp.example.com/oauth2/revoke"}
                        """, url: request.url)
            }
            return Fakes.response(
                status: status, body: status == 200 ? "" : #"{"error":"invalid_client"}"#, url: request.url)
        }
    }

    @Test("a refused revocation is reported beside the confirmed session end, and the sign-out is not a success")
    func refusedRevocation() async throws {
        let refusing = Self.revokingProvider(status: 401)
        let result = try await Fakes.iapCredential(http: refusing).logOut(
            settings: Fakes.settings(http: refusing, browser: Fakes.Browser.redirectingBack()))
        #expect(result.isSessionEndConfirmed)
        guard case .failed(let why) = result.revocation else {
            Issue.record("the refusal is not reported: \(result.revocation)")
            return
        }
        #expect(why.contains("invalid_client") || why.contains("401"), "\(why)")
        #expect(!why.contains("REFRESH-SECRET"))
        #expect(!result.isComplete)

        let manager = AuthenticationManager(
            settings: Fakes.settings(http: refusing, browser: Fakes.Browser.redirectingBack()))
        try await manager.arcGISCredentialStore.addAndPersist(Fakes.iapCredential(http: refusing))
        let report = await manager.signOutReport()
        let entry = try #require(report.invalidations.first)
        #expect(entry.outcome.succeeded, "the session end itself was confirmed")
        #expect(!entry.succeeded && !report.succeeded, "but the tokens stay usable")
    }

    @Test("an accepted revocation and a confirmed session end are a complete logout", arguments: [200])
    func acceptedRevocation(status: Int) async throws {
        let accepting = Self.revokingProvider(status: status)
        let result = try await Fakes.iapCredential(http: accepting).logOut(
            settings: Fakes.settings(http: accepting, browser: Fakes.Browser.redirectingBack()))
        #expect(result.revocation == .revoked)
        #expect(result.isComplete)
        let plain = try await Fakes.iapCredential(http: IAPLogoutTests.plainDiscovery)
            .logOut(
                settings: Fakes.settings(http: IAPLogoutTests.plainDiscovery, browser: Fakes.Browser.redirectingBack()))
        #expect(plain.revocation == .notOffered && plain.isComplete)
    }
}
