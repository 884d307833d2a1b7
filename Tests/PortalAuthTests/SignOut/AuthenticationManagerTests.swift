import Foundation
import Logging
import Testing
@testable import PortalAuth
import PortalAuthTesting

@Suite("AuthenticationManager sign-out")
struct AuthenticationManagerTests {
    typealias Fakes = SignOutFakes

    /// A portal that revokes for `portal-client` and refuses every other client ID.
    static func portal() -> Fakes.HTTP {
        Fakes.HTTP { request, _ in
            let ok = Fakes.fields(of: request)["client_id"] == "portal-client"
            return Fakes.response(
                body: ok ? #"{"success":true}"# : #"{"error":{"code":400,"message":"Invalid client_id"}}"#,
                url: request.url)
        }
    }

    /// A portal credential for another client ID (which the fake portal refuses).
    static func refusedCredential(http: Fakes.HTTP) -> OAuthUserCredential {
        var record = Fakes.record(.oauthUser)
        record.clientID = "unknown-client"
        return Fakes.portalCredential(record, http: http)
    }

    @Test("revokeOAuthTokens: true when every revocation succeeds (and with none), false when one fails")
    func revokeResult() async throws {
        let http = Self.portal()
        let manager = AuthenticationManager()
        #expect(await manager.revokeOAuthTokens())
        try await manager.arcGISCredentialStore.addAndPersist(Fakes.portalCredential(http: http))
        #expect(await manager.revokeOAuthTokens())
        try await manager.arcGISCredentialStore.addAndPersist(Self.refusedCredential(http: http))
        #expect(await manager.revokeOAuthTokens() == false)
        #expect(manager.arcGISCredentialStore.credentials.count == 2, "revoking does not remove")
    }

    @Test("signOut clears the persistent store even when a revocation fails, and reports each credential")
    func signOutClears() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.store()
        let http = Self.portal()
        let manager = AuthenticationManager(settings: Fakes.settings(http: http))
        try await manager.setupPersistentCredentialStorage(file: file)
        try await manager.arcGISCredentialStore.addAndPersist(Fakes.portalCredential(http: http))
        try await manager.arcGISCredentialStore.addAndPersist(Self.refusedCredential(http: http))
        #expect(try file.read().keys.count == 2)

        let report = await manager.signOutReport()
        #expect(report.revocations.count == 2)
        #expect(report.revocations.filter(\.outcome.succeeded).count == 1)
        #expect(report.invalidations.isEmpty)
        #expect(report.clearingError == nil)
        #expect(!report.succeeded)
        #expect(manager.arcGISCredentialStore.credentials.isEmpty)
        #expect(try file.read().isEmpty)
        #expect(try ArcGISCredentialStore.makePersistent(file: file).credentials.isEmpty)
    }

    @Test(
        "a store file that cannot be written: clearCredentialStores and signOut still empty the stores in memory, and report the failure"
    )
    func clearingFailureStillEmptiesMemory() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.store()
        let http = Self.portal()
        let manager = AuthenticationManager(settings: Fakes.settings(http: http))
        try await manager.setupPersistentCredentialStorage(file: file)
        let credential = Fakes.portalCredential(http: http)
        try await manager.arcGISCredentialStore.addAndPersist(credential)
        try await manager.networkCredentialStore.add(
            .password(username: "alice", password: "pw"), for: ProtectionSpace(host: "gis.example.com", port: 443))
        // The store's folder becomes a file: every write fails, whoever runs the test (root included).
        let folder = URL(fileURLWithPath: file.path).deletingLastPathComponent()
        try FileManager.default.removeItem(at: folder)
        try Data().write(to: folder)

        let error = await manager.clearCredentialStoresReportingError()
        #expect(error != nil)
        #expect(manager.arcGISCredentialStore.credentials.isEmpty)
        #expect(await manager.networkCredentialStore.protectionSpaces.isEmpty)
        // The credential that was held is unusable: this process never sends or refreshes it again.
        await #expect(throws: CredentialError.self) { _ = try await credential.tokenInfo }

        // add(_:) holds it at once (its write fails in the background); signOut empties memory all the same.
        manager.arcGISCredentialStore.add(Fakes.portalCredential(http: http))
        #expect(manager.arcGISCredentialStore.credentials.count == 1)
        let report = await manager.signOutReport()
        #expect(report.clearingError != nil)
        #expect(!report.succeeded)
        #expect(manager.arcGISCredentialStore.credentials.isEmpty)
    }

    @Test(
        "signOut without a browser revokes the IAP refresh token at the advertised endpoint, reports what stays valid, and logs it (issue 45)"
    )
    func signOutHeadlessIAP() async throws {
        let http = LogoutEvidenceTests.provider(userInfoStatus: 401, revokes: true)
        let lines = LogLines()
        var settings = LogoutEvidenceTests.headless(http)
        settings.logger = Logger(label: "test") { _ in CapturingLogHandler(storage: lines) }
        let manager = AuthenticationManager(settings: settings)
        try await manager.arcGISCredentialStore.addAndPersist(Fakes.iapCredential(http: http))
        let report = await manager.signOutReport()
        let entry = try #require(report.invalidations.first)
        guard case .browserLogoutSkipped(let reason) = entry.outcome else {
            Issue.record("outcome \(entry.outcome)")
            return
        }
        #expect(reason.contains("SSH"))
        #expect(entry.tokenRevocation == .revoked)
        #expect(entry.logoutResult?.browserLogoutSkipped == reason)
        #expect(!entry.succeeded && !report.succeeded, "the browser session stays")
        #expect(http.requests.filter { $0.url == LogoutEvidenceTests.revokeURL }.count == 1)
        #expect(manager.arcGISCredentialStore.credentials.isEmpty)
        let left = try #require(entry.leftValid(now: Date()))
        #expect(left.contains("the browser session at the identity provider"), "\(left)")
        #expect(lines.text.contains("signed out, but not everything ended"), "\(lines.text)")
        #expect(lines.text.contains("the browser session at the identity provider"), "\(lines.text)")
        #expect(!lines.text.contains("SECRET"))
    }

    @Test("signOut logs IAP credentials out with the manager's settings; an unconfirmed logout is not a success")
    func signOutIAP() async throws {
        let http = IAPLogoutTests.plainDiscovery
        let manager = AuthenticationManager(
            settings: Fakes.settings(http: http, browser: Fakes.Browser.redirectingBack()))
        try await manager.arcGISCredentialStore.addAndPersist(Fakes.iapCredential(http: http))
        let confirmed = await manager.signOutReport()
        #expect(confirmed.succeeded)
        #expect(confirmed.invalidations.map(\.outcome.succeeded) == [true])

        let silent = AuthenticationManager(
            settings: Fakes.settings(http: http, browser: Fakes.Browser(), timeout: .seconds(1)))
        try await silent.arcGISCredentialStore.addAndPersist(Fakes.iapCredential(http: http))
        #expect(await silent.invalidateIAPCredentials() == false)
        await silent.clearCredentialStores()
        #expect(silent.arcGISCredentialStore.credentials.isEmpty)
    }

    @Test("setupPersistentCredentialStorage loads what an earlier process stored")
    func persistentStorage() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.store()
        let http = Self.portal()
        let first = AuthenticationManager(settings: Fakes.settings(http: http))
        try await first.setupPersistentCredentialStorage(file: file)
        try await first.arcGISCredentialStore.addAndPersist(Fakes.portalCredential(http: http))

        let second = AuthenticationManager()
        #expect(second.arcGISCredentialStore.file == nil, "in memory by default")
        try await second.setupPersistentCredentialStorage(file: file)
        #expect(second.arcGISCredentialStore.oauthUserCredentials(portalURL: Fakes.portal).count == 1)
    }
}
