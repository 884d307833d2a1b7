import Foundation
import PortalAuth
import Testing

/// The toolkit's own `Authenticator` shape and `signOut()` extension (`ToolkitAuthenticator.swift`), and the
/// toolkit's test expectations for persistence, the default `Authenticator`, `setupPersistentCredentialStorage` and
/// clearing, against the bundled test server. Nested in the SDK-style suite, so serialized with its tests: they share
/// the process-wide manager and environment.
extension SDKStyleTests {
    @Suite("The toolkit's Authenticator and AuthenticationManager expectations")
    struct ToolkitStyleTests {
        /// A fresh persistent store file for the test, named by `PORTAL_AUTH_STORE`, and the environment put back.
        static func withStoreFile<T>(_ body: (URL) async throws -> T) async throws -> T {
            let directory = FileManager.default.temporaryDirectory.appending(path: "pa-toolkit-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appending(path: "state/credentials.json")
            setenv("PORTAL_AUTH_STORE", file.path, 1)
            defer { unsetenv("PORTAL_AUTH_STORE") }
            return try await body(file)
        }

        @MainActor
        @Test("handleChallenges(using:) installs a @MainActor final class as both handlers")
        func handleChallengesUsingAuthenticator() async {
            await SDKStyleTests.reset()
            defer { ArcGISEnvironment.authenticationManager.handleChallenges(using: nil) }
            let authenticator = ToolkitAuthenticator()
            ArcGISEnvironment.authenticationManager.handleChallenges(using: authenticator)
            #expect(
                ArcGISEnvironment.authenticationManager.arcGISAuthenticationChallengeHandler as? ToolkitAuthenticator
                    === authenticator)
            #expect(
                ArcGISEnvironment.authenticationManager.networkAuthenticationChallengeHandler as? ToolkitAuthenticator
                    === authenticator)
        }

        @MainActor
        @Test(
            "the portal raises .oAuthOrToken (answered, without OAuth, as a token challenge); a stand-alone server raises .token"
        )
        func challengeKinds() async throws {
            await SDKStyleTests.reset()
            defer { ArcGISEnvironment.authenticationManager.handleChallenges(using: nil) }
            let authenticator = ToolkitAuthenticator()
            authenticator.login = ("alice", try LocalServer.password)
            ArcGISEnvironment.authenticationManager.handleChallenges(using: authenticator)

            let portal = try await ArcGISEnvironment.authenticationManager.data(for: .get(LocalServer.portalSelf))
            #expect(SDKStyleTests.username(in: portal) == "alice")
            let standalone = try await ArcGISEnvironment.authenticationManager.data(
                for: .get(LocalServer.standaloneServices))
            #expect(standalone.statusCode == 200)
            #expect(String(decoding: standalone.body, as: UTF8.self).contains("alice"))
            #expect(authenticator.handledKinds == [.oAuthOrToken, .token])
            #expect(
                ArcGISEnvironment.authenticationManager.arcGISCredentialStore.credentials.map(\.kind.name) == [
                    "token", "token",
                ])
            await SDKStyleTests.reset()
        }

        @MainActor
        @Test(
            "an IAP challenge reaches the toolkit's .iap case and its IAPCredential; the ID token goes to the proxied app"
        )
        func iapChallenge() async throws {
            await SDKStyleTests.reset()
            defer { ArcGISEnvironment.authenticationManager.handleChallenges(using: nil) }
            setenv("BROWSER", try LocalServer.browser, 1)
            // An app on a desktop, where the browser it starts can be seen (without a display the default sign-in takes
            // a remote path; the test browser is headless whatever DISPLAY says).
            let display = getenv("DISPLAY").map { String(cString: $0) }
            setenv("DISPLAY", display ?? ":0", 1)
            defer {
                unsetenv("BROWSER")
                if display == nil { unsetenv("DISPLAY") }
            }
            let configuration = try await IAPConfiguration.configuration(from: LocalServer.iapConfiguration)
            let authenticator = ToolkitAuthenticator(iapConfigurations: [configuration])
            ArcGISEnvironment.authenticationManager.handleChallenges(using: authenticator)
            // The handler declares nothing to the manager; the app registers its configurations there.
            ArcGISEnvironment.authenticationManager.iapConfigurations = [configuration]
            defer { ArcGISEnvironment.authenticationManager.iapConfigurations = [] }

            var request = TransportRequest.get(try LocalServer.iapApp)
            request.headers.add(name: "Accept", value: "application/json")
            let response = try await ArcGISEnvironment.authenticationManager.data(for: request)
            #expect(response.statusCode == 200)
            let body = try #require(try JSONSerialization.jsonObject(with: response.body) as? [String: Any])
            #expect(body["user"] as? String == "alice")
            #expect(body["token_kind"] as? String == "id", "the SDK applies the ID token to hosts behind the proxy")
            #expect(authenticator.handledKinds == [.iap])
            await SDKStyleTests.reset()
        }

        @Test("a persistent store keeps PregeneratedTokenCredential and TokenCredential across a restart")
        func persistentStoreKeepsTokenCredentials() async throws {
            await SDKStyleTests.reset()
            try await Self.withStoreFile { _ in
                try await SDKStyleTests.withKeyring {
                    try await ArcGISEnvironment.authenticationManager.setupPersistentCredentialStorage(
                        access: .whenUnlocked)
                }
                let manager = ArcGISEnvironment.authenticationManager
                let pregenerated = PregeneratedTokenCredential(
                    url: URL(string: "https://www.arcgis.com")!,
                    tokenInfo: .init(accessToken: "token", expirationDate: .distantFuture, isSSLRequired: false)!)
                manager.arcGISCredentialStore.add(pregenerated)
                manager.arcGISCredentialStore.add(try await ArcGISCredential.publicSample)
                try await manager.arcGISCredentialStore.waitForPersistence()

                // The restarted app's store is pre-populated with the saved credentials.
                let restarted = try await ArcGISCredentialStore.makePersistent(access: .whenUnlocked)
                #expect(restarted.credentials.map(\.kind.name).sorted() == ["pregenerated-token", "token"])
                let token = try #require(restarted.credentials.first { $0 is TokenCredential })
                #expect(token.username == "alice")
                let restartedManager = AuthenticationManager(arcGISCredentialStore: restarted)
                // The reloaded token answers the portal without a handler.
                let response = try await restartedManager.data(for: .get(LocalServer.portalSelf))
                #expect(SDKStyleTests.username(in: response) == "alice")
                try await SDKStyleTests.withKeyring { await manager.clearCredentialStores() }
            }
            await SDKStyleTests.reset()
        }

        /// Runs `body` with no session bus at all, as on a headless machine or in CI: no D-Bus address, no bus in the
        /// runtime folder; the environment put back afterwards.
        static func withoutSessionBus<T>(_ body: () async throws -> T) async throws -> T {
            let environment = ProcessInfo.processInfo.environment
            let saved = (environment["DBUS_SESSION_BUS_ADDRESS"], environment["XDG_RUNTIME_DIR"])
            unsetenv("DBUS_SESSION_BUS_ADDRESS")
            setenv(
                "XDG_RUNTIME_DIR",
                FileManager.default.temporaryDirectory.appending(path: "pa-no-bus-\(UUID().uuidString)").path, 1)
            defer {
                if let bus = saved.0 { setenv("DBUS_SESSION_BUS_ADDRESS", bus, 1) }
                if let runtime = saved.1 { setenv("XDG_RUNTIME_DIR", runtime, 1) } else { unsetenv("XDG_RUNTIME_DIR") }
            }
            return try await body()
        }

        @Test(
            "without a keyring, setupPersistentCredentialStorage(access:) as the samples call it keeps both stores in private 0600 files, says so, and a restarted app finds them"
        )
        func persistentWithoutKeyring() async throws {
            await SDKStyleTests.reset()
            try await Self.withStoreFile { file in
                try await Self.withoutSessionBus {
                    // As the samples write it: `try?` would have left memory-only stores before (issue 34).
                    try? await ArcGISEnvironment.authenticationManager.setupPersistentCredentialStorage(
                        access: .whenUnlockedThisDeviceOnly)
                    let manager = ArcGISEnvironment.authenticationManager
                    #expect(manager.arcGISCredentialStore.storageLocation.kind == .file)
                    #expect(manager.arcGISCredentialStore.storageLocation.path == file.path)
                    let network = manager.networkCredentialStore.storageLocation
                    #expect(network.kind == .file)
                    #expect(
                        network.path
                            == file.deletingLastPathComponent().appending(path: "credentials-network.json").path)

                    manager.arcGISCredentialStore.add(try await ArcGISCredential.publicSample)
                    try await manager.arcGISCredentialStore.waitForPersistence()
                    let space = ProtectionSpace(host: "gis.example.com", port: 443)
                    try await manager.networkCredentialStore.add(
                        .password(username: "alice", password: "a-password"), for: space)
                    try await manager.networkCredentialStore.waitForPersistence()
                    for path in [file.path, try #require(network.path)] {
                        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
                        #expect(mode == 0o600, "\(path)")
                    }

                    // The restarted app.
                    let restarted = AuthenticationManager()
                    try await restarted.setupPersistentCredentialStorage(access: .whenUnlockedThisDeviceOnly)
                    #expect(restarted.arcGISCredentialStore.credentials.count == 1)
                    #expect(await restarted.networkCredentialStore.credentials(forHost: "gis.example.com").count == 1)
                    await restarted.clearCredentialStores()
                }
            }
            await SDKStyleTests.reset()
        }

        @Test(
            "setupPersistentCredentialStorage(access:requiringKeyring: true) throws where the keychain (keyring) cannot be used, and both stores stay as they were"
        )
        func makePersistentThrowsWithoutKeyring() async throws {
            await SDKStyleTests.reset()
            let arcGISStore = ArcGISEnvironment.authenticationManager.arcGISCredentialStore
            let networkStore = ArcGISEnvironment.authenticationManager.networkCredentialStore
            try await Self.withStoreFile { file in
                try await Self.withoutSessionBus {
                    do {
                        try await ArcGISEnvironment.authenticationManager.setupPersistentCredentialStorage(
                            access: .whenUnlocked, requiringKeyring: true)
                        Issue.record("Expected an error: there is no keyring, and the app wants the keyring only")
                    } catch {
                        #expect("\(error)".contains("keyring"), "\(error)")
                    }
                    #expect(!FileManager.default.fileExists(atPath: file.path), "nothing written to a file")
                }
            }
            #expect(ArcGISEnvironment.authenticationManager.arcGISCredentialStore === arcGISStore)
            #expect(ArcGISEnvironment.authenticationManager.networkCredentialStore === networkStore)
            #expect(ArcGISEnvironment.authenticationManager.arcGISCredentialStore.storageLocation == .memory)
        }

        @Test(
            "clearCredentialStores() empties the store in memory, also when its file cannot be written; signOut() too")
        func clearCredentialStores() async throws {
            await SDKStyleTests.reset()
            ArcGISEnvironment.authenticationManager.arcGISCredentialStore.add(
                PregeneratedTokenCredential(
                    url: URL(string: "www.arcgis.com")!,
                    tokenInfo: .init(accessToken: "token", expirationDate: .distantFuture, isSSLRequired: false)!
                )
            )
            #expect(ArcGISEnvironment.authenticationManager.arcGISCredentialStore.credentials.count == 1)
            await ArcGISEnvironment.authenticationManager.clearCredentialStores()
            #expect(ArcGISEnvironment.authenticationManager.arcGISCredentialStore.credentials.isEmpty)

            // A persistent store whose folder has become a file: the write fails, memory is emptied all the same.
            try await Self.withStoreFile { file in
                let manager = ArcGISEnvironment.authenticationManager
                try await manager.setupPersistentCredentialStorage()
                try await manager.arcGISCredentialStore.addAndPersist(try await ArcGISCredential.publicSample)
                let folder = file.deletingLastPathComponent()
                try FileManager.default.removeItem(at: folder)
                try Data().write(to: folder)
                await manager.clearCredentialStores()
                #expect(manager.arcGISCredentialStore.credentials.isEmpty)
            }
            await SDKStyleTests.reset()
        }

        @Test(
            "the toolkit's signOut() extension and PortalAuth's signOutReport() both leave the stores empty; the report names a store that could not be emptied"
        )
        func signOutEmptiesStores() async throws {
            await SDKStyleTests.reset()
            let manager = ArcGISEnvironment.authenticationManager
            manager.arcGISCredentialStore.add(try await ArcGISCredential.publicSample)
            await manager.signOut()  // the toolkit's extension (ToolkitAuthenticator.swift)
            #expect(manager.arcGISCredentialStore.credentials.isEmpty)

            try await Self.withStoreFile { file in
                try await manager.setupPersistentCredentialStorage()
                try await manager.arcGISCredentialStore.addAndPersist(try await ArcGISCredential.publicSample)
                let folder = file.deletingLastPathComponent()
                try FileManager.default.removeItem(at: folder)
                try Data().write(to: folder)
                let report = await manager.signOutReport()
                #expect(manager.arcGISCredentialStore.credentials.isEmpty)
                #expect(report.clearingError != nil)
            }
            await SDKStyleTests.reset()
        }

        @Test("Authenticator() without a terminal fails a token challenge with an error naming it, not a bare continue")
        func defaultAuthenticatorWithoutTerminal() async throws {
            await SDKStyleTests.reset()
            defer { ArcGISEnvironment.authenticationManager.handleChallenges(using: nil) }
            // As the token, IWA and PKI samples create it; the tests run without a terminal.
            ArcGISEnvironment.authenticationManager.handleChallenges(using: Authenticator())
            do {
                _ = try await ArcGISEnvironment.authenticationManager.data(for: .get(LocalServer.standaloneServices))
                Issue.record("the token challenge was answered without anyone to ask")
            } catch let error as AuthenticationChallengeError {
                #expect(error.kind == .tokenRequired)
                #expect(error.description.contains("no terminal"), "\(error)")
            }
        }
    }
}
