import Foundation
import Testing
@testable import PortalAuth
import PortalAuthTesting
@testable import PortalAuthCore

/// Sign-out of several IAP sign-ins at one identity provider (issue 23, seen against Glewlwyd): one browser logout
/// per provider session, told apart by the ID tokens' `sid` (else subject), shared by the sign-ins of that session.
@Suite("Sign-out: one browser logout per identity-provider session", .timeLimit(.minutes(1)))
struct IAPSessionLogoutTests {
    typealias Fakes = SignOutFakes

    /// An unsigned compact JWT with `claims` (sign-out reads claims only).
    static func idToken(_ claims: [String: String]) -> String {
        let payload = JSONValue.object(
            JSONObject(claims.sorted { $0.key < $1.key }.map { (key: $0.key, value: JSONValue.string($0.value)) })
        ).serialized()
        return Base64URL.encode(Data(#"{"alg":"RS256"}"#.utf8)) + "." + Base64URL.encode(Data(payload.utf8)) + ".c2ln"
    }

    static func record(clientID: String, idToken: String?, logoutURL: URL = Fakes.logoutURL, port: Int? = nil)
        -> StoredCredential
    {
        var record = Fakes.record(.iap)
        record.clientID = clientID
        record.idToken = idToken
        record.logoutURL = logoutURL
        if let port { record.redirectURL = URL(string: "http://127.0.0.1:\(port)/callback")! }
        return record
    }

    @Test(
        "sessions: the same sid at the same logout endpoint and issuer is one session; another sid, endpoint or issuer is another; without sid the subject decides; without an ID token each is its own"
    )
    func grouping() {
        let iss = "https://idp.example.com"
        let other = URL(string: "https://other.example.com/logout")!
        let records = [
            Self.record(clientID: "a", idToken: Self.idToken(["iss": iss, "sub": "alice", "sid": "s1"])),
            Self.record(clientID: "b", idToken: Self.idToken(["iss": iss, "sub": "alice", "sid": "s2"])),
            Self.record(clientID: "c", idToken: Self.idToken(["iss": iss, "sub": "bob", "sid": "s1"])),
            Self.record(
                clientID: "d", idToken: Self.idToken(["iss": iss, "sub": "alice", "sid": "s1"]), logoutURL: other),
            Self.record(clientID: "e", idToken: Self.idToken(["iss": iss, "sub": "carol"])),
            Self.record(clientID: "f", idToken: Self.idToken(["iss": iss, "sub": "carol"])),
            Self.record(clientID: "g", idToken: nil),
            Self.record(clientID: "h", idToken: nil),
            Self.record(clientID: "i", idToken: "not.a-jwt"),
            Self.record(
                clientID: "j",
                idToken: Self.idToken(["iss": "https://elsewhere.example.com", "sub": "alice", "sid": "s1"])),
        ]
        #expect(IAPSessionLogouts.sessions(of: records) == [[0, 2], [1], [3], [4, 5], [6], [7], [8], [9]])
    }

    @Test(
        "two sign-ins of one session: the browser opens once, both share its confirmation, and each refresh token is revoked"
    )
    func oneLogoutPerSession() async throws {
        let port = try freePort()
        let http = SignOutConformanceTests.revokingProvider(status: 200)
        let browser = Fakes.Browser.redirectingBack()
        let manager = AuthenticationManager(settings: Fakes.settings(http: http, browser: browser))
        let token = Self.idToken(["iss": "https://idp.example.com", "sub": "alice", "sid": "s1"])
        for clientID in ["client-a", "client-b"] {
            var record = Self.record(clientID: clientID, idToken: token, port: port)
            record.refreshToken = "REFRESH-\(clientID)"
            try await manager.arcGISCredentialStore.addAndPersist(Fakes.iapCredential(record, http: http))
        }
        let report = await manager.signOutReport()
        #expect(browser.urls.count == 1, "one browser logout for the one provider session: \(browser.urls)")
        #expect(report.invalidations.count == 2)
        for entry in report.invalidations {
            #expect(entry.outcome.succeeded, "\(entry.credential.targetDescription): \(entry.outcome)")
            #expect(entry.tokenRevocation == .revoked)
        }
        let revoked = http.requests.filter { $0.url.path.hasSuffix("/revoke") }.compactMap {
            Fakes.fields(of: $0)["token"]
        }
        #expect(Set(revoked) == ["REFRESH-client-a", "REFRESH-client-b"])
        #expect(report.succeeded)
        for credential in report.invalidations.compactMap({ $0.credential as? IAPCredential }) {
            await #expect(throws: CredentialError.self) { _ = try await credential.tokenInfo }
        }
    }

    @Test("two sessions on one fixed port: two browser logouts, one after the other, each confirmed")
    func twoSessionsSharedPort() async throws {
        let port = try freePort()
        let http = IAPLogoutTests.plainDiscovery
        let browser = Fakes.Browser.redirectingBack()
        let manager = AuthenticationManager(settings: Fakes.settings(http: http, browser: browser))
        for (clientID, sid) in [("client-a", "s1"), ("client-b", "s2")] {
            let record = Self.record(
                clientID: clientID,
                idToken: Self.idToken(["iss": "https://idp.example.com", "sub": "alice", "sid": sid]), port: port)
            try await manager.arcGISCredentialStore.addAndPersist(Fakes.iapCredential(record, http: http))
        }
        let report = await manager.signOutReport()
        #expect(browser.urls.count == 2)
        #expect(report.invalidations.allSatisfy { $0.outcome.succeeded }, "\(report.invalidations.map(\.outcome))")
    }

    @Test("an unconfirmed logout of a session is unconfirmed for every sign-in of it")
    func unconfirmedShared() async throws {
        let http = IAPLogoutTests.plainDiscovery
        let browser = Fakes.Browser()  // never redirects back
        let manager = AuthenticationManager(
            settings: Fakes.settings(http: http, browser: browser, timeout: .seconds(1)))
        let token = Self.idToken(["iss": "https://idp.example.com", "sub": "alice", "sid": "s1"])
        for clientID in ["client-a", "client-b"] {
            try await manager.arcGISCredentialStore.addAndPersist(
                Fakes.iapCredential(Self.record(clientID: clientID, idToken: token), http: http))
        }
        let report = await manager.signOutReport()
        #expect(browser.urls.count == 1)
        #expect(report.invalidations.count == 2)
        for entry in report.invalidations {
            guard case .logoutNotConfirmed = entry.outcome else {
                Issue.record("\(entry.outcome)")
                continue
            }
        }
        #expect(!report.succeeded)
    }
}
