import Foundation
import PortalAuth
import Testing

/// Code written for the ArcGIS Maps SDK for Swift — the documentation's snippets, the toolkit's `Authenticator` and
/// `AuthenticationManager` extension, the samples' `publicSample` credential and handlers — compiled against
/// PortalAuth with `import PortalAuth` only (no `@testable`), run against the bundled test server.
///
/// One suite, serialized: it works on the process-wide `ArcGISEnvironment.authenticationManager`, as apps do, and
/// leaves it empty and without handlers after each test.
@Suite(
    "Code written for the ArcGIS Maps SDK", .serialized, .enabled(if: LocalServer.isConfigured), .timeLimit(.minutes(4))
)
struct SDKStyleTests {
    /// Puts the shared manager back as a new app finds it.
    static func reset() async {
        ArcGISEnvironment.authenticationManager.handleChallenges(using: nil)
        ArcGISEnvironment.authenticationManager.arcGISCredentialStore = ArcGISCredentialStore()
        await ArcGISEnvironment.authenticationManager.setNetworkCredentialStore(NetworkCredentialStore())
        ArcGISEnvironment.apiKey = nil
    }

    /// Runs `body` with the test desktop keyring's session bus in the environment (network credentials persist only
    /// in a keyring), then puts the environment back.
    static func withKeyring<T>(_ body: () async throws -> T) async throws -> T {
        let saved = ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"]
        setenv("DBUS_SESSION_BUS_ADDRESS", try LocalServer.keyringBus, 1)
        defer {
            if let saved { setenv("DBUS_SESSION_BUS_ADDRESS", saved, 1) } else { unsetenv("DBUS_SESSION_BUS_ADDRESS") }
        }
        return try await body()
    }

    static func username(in response: TransportResponse) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
            let user = object["user"] as? [String: Any]
        else { return nil }
        return user["username"] as? String
    }

    @Test(
        "an app's challenge handler answers the portal's 499 with a TokenCredential; handleChallenges(using: nil) at teardown"
    )
    func appChallengeHandler() async throws {
        await Self.reset()
        let authenticationManager = ArcGISEnvironment.authenticationManager
        authenticationManager.arcGISAuthenticationChallengeHandler = MyArcGISChallengeHandler(
            login: ("alice", try LocalServer.password))
        authenticationManager.networkAuthenticationChallengeHandler = MyNetworkChallengeHandler(certificate: nil)

        let response = try await authenticationManager.data(for: .get(LocalServer.portalSelf))
        #expect(Self.username(in: response) == "alice")
        let stored = try #require(authenticationManager.arcGISCredentialStore.credentials.first)
        #expect(stored.username == "alice")
        guard case .token = stored.kind else {
            Issue.record("the handler's credential is a TokenCredential, not \(stored)")
            return
        }

        // The samples' teardown.
        authenticationManager.handleChallenges(using: nil)
        #expect(authenticationManager.arcGISAuthenticationChallengeHandler == nil)
        #expect(authenticationManager.networkAuthenticationChallengeHandler == nil)
        authenticationManager.arcGISCredentialStore.removeAll()
        #expect(authenticationManager.arcGISCredentialStore.credentials.isEmpty)
    }

    @Test("a challenge the handler cancels fails with ArcGISChallengeCancellationError")
    func cancelledChallenge() async throws {
        await Self.reset()
        defer { ArcGISEnvironment.authenticationManager.handleChallenges(using: nil) }
        ArcGISEnvironment.authenticationManager.arcGISAuthenticationChallengeHandler = MyArcGISChallengeHandler(
            login: nil)
        let url = try LocalServer.portalSelf
        do {
            _ = try await ArcGISEnvironment.authenticationManager.data(for: .get(url))
            Issue.record("the cancelled challenge did not fail the request")
        } catch let error as ArcGISChallengeCancellationError {
            #expect(error.requestURL == url)
        }
        #expect(ArcGISEnvironment.authenticationManager.arcGISCredentialStore.credentials.isEmpty)
    }

    @Test(
        "the samples' extension ArcGISCredential { static var publicSample }: store.add(.publicSample), synchronously")
    func publicSample() async throws {
        await Self.reset()
        let publicSample = try await ArcGISCredential.publicSample
        // No handler: the stored credential alone answers.
        ArcGISEnvironment.authenticationManager.arcGISCredentialStore.add(publicSample)
        let response = try await ArcGISEnvironment.authenticationManager.data(for: .get(LocalServer.portalSelf))
        #expect(Self.username(in: response) == "alice")

        // The implicit member form, as `store.add(try await .publicSample)` in the older samples.
        let store = ArcGISCredentialStore()
        store.add(try await .publicSample)
        #expect(store.credentials.count == 1)
        #expect(store.credential(for: try LocalServer.portalSelf) != nil)
        ArcGISEnvironment.authenticationManager.arcGISCredentialStore.removeAll()
    }

    @Test("the API key goes only to ArcGIS Online hosts: the local portal still asks for a token")
    func apiKey() async throws {
        await Self.reset()
        defer { ArcGISEnvironment.apiKey = nil }
        ArcGISEnvironment.apiKey = APIKey("AAPK-not-a-real-key")
        do {
            _ = try await ArcGISEnvironment.authenticationManager.data(for: .get(LocalServer.portalSelf))
            Issue.record("the local portal answered without a token")
        } catch let error as AuthenticationChallengeError {
            // 499 Token Required, not 498 Invalid token: the key was not sent to this host.
            #expect(error.description.contains("499"), "\(error)")
        }
    }

    @Test(
        "the toolkit's Authenticator signs in through the browser into persistent storage; the toolkit's sign-out clears it"
    )
    func toolkitAuthenticatorAndPersistence() async throws {
        await Self.reset()
        let directory = FileManager.default.temporaryDirectory.appending(path: "pa-sdk-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        // Linux: the store file and the browser come from the environment, as for the command-line tool.
        setenv("PORTAL_AUTH_STORE", directory.appending(path: "state/credentials.json").path, 1)
        setenv("BROWSER", try LocalServer.browser, 1)
        setenv("PORTAL_AUTH_TEST_BROWSER_TIMEOUT", "60", 1)
        // An app on a desktop, where the browser it starts can be seen (without a display the sign-in would take a
        // remote path; the test browser is headless whatever DISPLAY says).
        let display = getenv("DISPLAY").map { String(cString: $0) }
        setenv("DISPLAY", display ?? ":0", 1)
        defer {
            unsetenv("PORTAL_AUTH_STORE"); unsetenv("BROWSER")
            if display == nil { unsetenv("DISPLAY") }
        }

        // The persistent stores, as the documentation sets them up (network credentials in the desktop keyring).
        try await Self.withKeyring {
            try await ArcGISEnvironment.authenticationManager.setupPersistentCredentialStorage(
                access: .whenUnlockedThisDeviceOnly,
                synchronizesWithiCloud: false
            )
            ArcGISEnvironment.authenticationManager.arcGISCredentialStore = try await .makePersistent(
                access: .afterFirstUnlockThisDeviceOnly,
                synchronizesWithiCloud: true
            )
            await ArcGISEnvironment.authenticationManager.setNetworkCredentialStore(
                try await .makePersistent(access: .afterFirstUnlockThisDeviceOnly, synchronizesWithiCloud: true)
            )
        }

        let configuration = OAuthUserConfiguration(
            portalURL: try LocalServer.portal, clientID: try LocalServer.clientID)
        let authenticator = Authenticator(
            promptForUntrustedHosts: false, oAuthUserConfigurations: [configuration], iapConfigurations: [])
        ArcGISEnvironment.authenticationManager.handleChallenges(using: authenticator)
        defer { ArcGISEnvironment.authenticationManager.handleChallenges(using: nil) }

        let response = try await ArcGISEnvironment.authenticationManager.data(for: .get(LocalServer.portalSelf))
        #expect(Self.username(in: response) == "alice")
        try await ArcGISEnvironment.authenticationManager.arcGISCredentialStore.waitForPersistence()
        // A restarted app finds the sign-in in its persistent store.
        let restarted = try await ArcGISCredentialStore.makePersistent(access: .afterFirstUnlockThisDeviceOnly)
        let signedIn = try #require(restarted.credentials.first as? OAuthUserCredential)
        #expect(signedIn.username == "alice")
        #expect(try await signedIn.tokenInfo.accessToken.isEmpty == false)

        // The toolkit's sign-out: revoke, then clear (synchronously in memory, the file follows).
        let signOut = SignOut(authenticationManager: ArcGISEnvironment.authenticationManager)
        #expect(await signOut.revokeOAuthTokens())
        await signOut.signOut()
        #expect(ArcGISEnvironment.authenticationManager.arcGISCredentialStore.credentials.isEmpty)
        try await ArcGISEnvironment.authenticationManager.arcGISCredentialStore.waitForPersistence()
        #expect(
            try await ArcGISCredentialStore.makePersistent(access: .afterFirstUnlockThisDeviceOnly).credentials.isEmpty)

        // The other toolkit form, and the toolkit's own clearing.
        ArcGISEnvironment.authenticationManager.handleChallenges(
            using: Authenticator(oAuthUserConfigurations: [configuration]))
        try await Self.withKeyring { await ArcGISEnvironment.authenticationManager.clearCredentialStores() }
        await Self.reset()
    }

    @Test("network credentials: a switch over NetworkCredential, credentials(forHost:), CertificateImportError")
    func networkCredentials() async throws {
        await Self.reset()
        let store = try await Self.withKeyring {
            try await NetworkCredentialStore.makePersistent(
                access: .afterFirstUnlockThisDeviceOnly, synchronizesWithiCloud: false)
        }
        await ArcGISEnvironment.authenticationManager.setNetworkCredentialStore(store)
        let host = try #require(try LocalServer.portal.host)
        let space = try #require(ProtectionSpace(url: try LocalServer.portal))
        try await store.add(.password(username: "alice", password: try LocalServer.password), for: space)

        let identity = try TestIdentity.make()
        defer { identity.remove() }
        try await store.add(try .certificate(at: identity.file, password: identity.password), for: space)

        let described = await ArcGISEnvironment.authenticationManager.networkCredentialStore.credentials(forHost: host)
            .map(describe)
        #expect(described == ["Password for alice", "Certificate of \(TestIdentity.commonName)"])
        #expect(await store.credentials(forHost: "no-such-host.example").isEmpty)

        // The toolkit's certificate picker messages.
        var importError: CertificateImportError?
        do {
            _ = try NetworkCredential.certificate(at: identity.file, password: "not-the-password")
        } catch {
            importError = error as? CertificateImportError
        }
        #expect(message(for: importError) == "The password was invalid.")
        do {
            _ = try NetworkCredential.certificate(at: identity.garbage, password: identity.password)
        } catch {
            importError = error as? CertificateImportError
        }
        #expect(message(for: importError) == "The certificate file was invalid.")

        // A request through the manager sends the stored password to the portal's host (which ignores it) and is
        // still challenged for a token: network and ArcGIS credentials are separate.
        ArcGISEnvironment.authenticationManager.arcGISAuthenticationChallengeHandler = MyArcGISChallengeHandler(
            login: ("alice", try LocalServer.password))
        let response = try await ArcGISEnvironment.authenticationManager.data(for: .get(LocalServer.portalSelf))
        #expect(Self.username(in: response) == "alice")
        try await Self.withKeyring { await store.removeAll() }
        await Self.reset()
    }
}
