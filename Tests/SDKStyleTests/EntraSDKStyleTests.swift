import Foundation
import PortalAuth
import Testing

/// An app written for the ArcGIS Maps SDK (the toolkit's `Authenticator`, the app's IAP configuration registered with
/// the shared manager) against the Microsoft Entra ID simulation (issue 44; scripts/entra, Tests/Entra/README.md):
/// the seed's IAP JSON with each tenant form signs in, reaches the app proxy, refreshes and logs out.
///
/// Serialized, on the process-wide manager, with the simulation's proxy and CA in this process's environment (as an
/// app behind a corporate proxy has them) for each test only.
@Suite(
    "Code written for the ArcGIS Maps SDK: Microsoft Entra ID simulation", .serialized,
    .enabled(if: EntraSimulator.isConfigured), .timeLimit(.minutes(4)))
struct EntraSDKStyleTests {
    @MainActor
    @Test(
        "the toolkit's Authenticator signs in with each tenant form when the app proxy redirects, refreshes, and logs out",
        arguments: ["guid", "onmicrosoft", "custom-domain", "organizations"])
    func fullCycle(_ form: String) async throws {
        await SDKStyleTests.reset()
        defer { ArcGISEnvironment.authenticationManager.handleChallenges(using: nil) }
        try await EntraSimulator.steer("reset")
        let app = try #require(URL(string: try EntraSimulator.value("PORTAL_AUTH_ENTRA_APP") + "/data"))
        let file = URL(filePath: try EntraSimulator.value("PORTAL_AUTH_ENTRA_CONFIGS") + "/\(form).json")
        let saved = try EntraSimulator.enter()
        defer { EntraSimulator.restore(saved) }
        do {
            let configuration = try await IAPConfiguration.configuration(from: file)
            let authenticator = ToolkitAuthenticator(iapConfigurations: [configuration])
            let manager = ArcGISEnvironment.authenticationManager
            manager.handleChallenges(using: authenticator)
            manager.iapConfigurations = [configuration]
            // The manager's settings as an app started on this desktop makes them (the process-wide manager's were
            // made before this test put DISPLAY and BROWSER in the environment): its sign-out opens the browser.
            let settings = manager.settings
            manager.settings = SignInSettings(timeout: .seconds(60))
            defer {
                manager.iapConfigurations = []
                manager.settings = settings
            }

            let response = try await manager.data(for: .get(app))
            #expect(response.statusCode == 200, "\(form)")
            let body = try JSONSerialization.jsonObject(with: response.body) as? [String: Any]
            #expect(body?["app"] as? String == "entra-app-proxy", "\(form): \(String(describing: body))")
            #expect(authenticator.handledKinds == [.iap], "\(form)")
            let credential = try #require(manager.arcGISCredentialStore.credentials.first as? IAPCredential)

            // Refresh: the rotated refresh token replaces the one used.
            let before = try await credential.tokenInfo(minimumValidity: nil).refreshToken
            let after = try await credential.tokenInfo(minimumValidity: nil, forceRefresh: true).refreshToken
            #expect(after != nil && after != before, "\(form)")
            let again = try await manager.data(for: .get(app))
            #expect(again.statusCode == 200, "\(form): the refreshed token reaches the app proxy")
            #expect(authenticator.handledKinds == [.iap], "\(form): no second sign-in")

            // Sign out as the toolkit does: the browser logout (account picker, state) is confirmed.
            let report = await manager.signOutReport()
            #expect(
                report.invalidations.count == 1 && report.succeeded,
                "\(form): the logout came back to the app: \(report.invalidations.map { "\($0.outcome)" })")
            #expect(manager.arcGISCredentialStore.credentials.isEmpty)
        }
        await SDKStyleTests.reset()
    }
}

/// The Entra simulation's `PORTAL_AUTH_ENTRA_*` variables (from `.run/entra.env`) and its steering.
enum EntraSimulator {
    /// Whether the simulation is there; with `PORTAL_AUTH_REQUIRE_INTEGRATION=1` (scripts/test) a missing one is a
    /// failure, not a skip.
    static var isConfigured: Bool {
        let environment = ProcessInfo.processInfo.environment
        return environment["PORTAL_AUTH_ENTRA_PROXY"] != nil || environment["PORTAL_AUTH_REQUIRE_INTEGRATION"] == "1"
    }

    /// A `PORTAL_AUTH_ENTRA_*` value (from `.run/entra.env`), or a recorded failure.
    static func value(_ name: String) throws -> String {
        guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else {
            Issue.record(
                "\(name) is not set: start the simulation with scripts/entra start and source .run/entra.env, or run scripts/test"
            )
            throw CancellationError()
        }
        return value
    }

    /// POSTs to the simulation's steering endpoint (plain HTTP on 127.0.0.1) with a manager of its own.
    static func steer(_ path: String) async throws {
        let url = try #require(URL(string: try value("PORTAL_AUTH_ENTRA_CONTROL") + "/" + path))
        let response = try await AuthenticationManager().data(for: TransportRequest(method: .post, url: url))
        #expect(response.statusCode == 200, "\(path)")
    }

    /// Puts the simulation's proxy, CA and browser in this process's environment, as an app on a desktop (DISPLAY)
    /// behind a corporate proxy has them; the values they replace, for `restore(_:)`.
    static func enter() throws -> [(String, String?)] {
        let values = [
            "https_proxy": try value("PORTAL_AUTH_ENTRA_PROXY"),
            "PORTAL_AUTH_CA_BUNDLE": try value("PORTAL_AUTH_ENTRA_CA_BUNDLE"),
            "BROWSER": try value("PORTAL_AUTH_ENTRA_BROWSER"),
            "DISPLAY": ProcessInfo.processInfo.environment["DISPLAY"] ?? ":0",
        ]
        let saved = values.keys.map { ($0, ProcessInfo.processInfo.environment[$0]) }
        for (name, value) in values { setenv(name, value, 1) }
        return saved
    }

    /// Puts back the environment `enter()` changed.
    static func restore(_ saved: [(String, String?)]) {
        for (name, value) in saved {
            if let value { setenv(name, value, 1) } else { unsetenv(name) }
        }
    }
}
