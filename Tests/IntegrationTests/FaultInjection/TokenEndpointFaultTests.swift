import Foundation
import Testing
@testable import PortalAuth

/// The token endpoint failing in every way a network or a server can, between a real sign-in and its refresh:
/// `fault_proxy.py` in front of the test server breaks the refresh requests. Each fault ends in a typed error that
/// says what happened to which endpoint, within the time limits, with no token in it; the store still parses and
/// keeps the sign-in, and the next refresh through a healthy endpoint works.
@Suite("Token endpoint faults", .serialized, .enabled(if: TestServer.isConfigured), .timeLimit(.minutes(3)))
struct TokenEndpointFaultTests {
    /// What a fault must end in.
    enum Expected: Sendable {
        /// Not retried (the request may have reached the provider, so the refresh token may be spent):
        /// `CredentialError` of category `.unavailable` saying so.
        case unavailable
        /// Not retried: `TokenEndpointError.invalidResponse`.
        case invalidResponse
    }

    /// Mode of the proxy, what it must end in, and words the message must contain.
    static let faults: [(mode: String, expected: Expected, says: String)] = [
        ("status-500", .unavailable, "HTTP 500"),
        ("reset", .unavailable, "reset"),
        ("close", .unavailable, "Empty reply"),
        ("stall", .unavailable, "timed out"),
        ("cut", .unavailable, "transfer closed"),
        ("garbage", .unavailable, "valid HTTP"),
        ("truncate", .invalidResponse, "not valid JSON"),
        ("wrong-type", .invalidResponse, "content type text/html"),
        ("html-200", .invalidResponse, "Sign in to the guest network"),
    ]

    /// Two attempts of at most 2 s each; only failures before sending are tried twice.
    static let policy = RefreshPolicy(attempts: 2, initialBackoff: .milliseconds(50), attemptTimeout: .seconds(2))

    /// A real portal sign-in, stored in a scratch store, made through a fault proxy in front of the test server
    /// (so that later token requests can be faulted). The caller stops the proxy.
    static func portalSignInThroughProxy() async throws -> (
        server: TestServer, proxy: FaultProxy, proxied: TestServer, store: ScratchStore
    ) {
        let server = try TestServer.current()
        let proxy = try await FaultProxy.start(upstream: server.base)
        do {
            let proxied = server.through(proxy)
            let store = try ScratchStore()
            try await store.signIn(.portal, server: proxied)
            // Past half its lifetime: `--min-valid` beyond what it has left refreshes it.
            try await store.ageAccessToken(.portal)
            return (server, proxy, proxied, store)
        } catch {
            proxy.stop()
            throw error
        }
    }

    @Test(
        "500s, resets, empty replies, 30 s stalls, cut transfers, garbage, truncated JSON, HTML: typed errors, one request, store kept"
    )
    func everyFault() async throws {
        let (server, proxy, proxied, store) = try await Self.portalSignInThroughProxy()
        defer { proxy.stop() }
        let refreshToken = try #require(try store.field("refresh_token", of: .portal))
        let portal = try #require(URL(string: proxied.portal))

        func credential() throws -> OAuthUserCredential {
            let file = CredentialStoreFile(location: StoreLocation(path: store.path))
            let loaded = try ArcGISCredentialStore.makePersistent(
                file: file, settings: SignInSettings(browser: nil, refreshPolicy: Self.policy))
            return try #require(loaded.oauthUserCredential(portalURL: portal, clientID: server.clientID))
        }

        for (mode, expected, says) in Self.faults {
            let before = try await proxy.state()
            try await proxy.arm(mode, seconds: 30)
            do {
                _ = try await credential().tokenInfo(minimumValidity: .zero, forceRefresh: true)
                Issue.record("\(mode): the refresh succeeded through the fault")
            } catch {
                let message = "\(error)"
                switch expected {
                case .unavailable:
                    let typed = error as? CredentialError
                    #expect(typed?.category == .unavailable, "\(mode): \(type(of: error)) \(message)")
                    #expect(message.contains("may have reached"), "\(mode): \(message)")
                case .invalidResponse:
                    #expect(
                        (error as? TokenEndpointError)?.kind == .invalidResponse,
                        "\(mode): \(type(of: error)) \(message)")
                }
                #expect(message.contains(says), "\(mode): \(message)")
                #expect(
                    message.contains("/sharing/rest/oauth2/token"), "\(mode): the endpoint is not named: \(message)")
                #expect(!message.contains(refreshToken), "\(mode): the message shows the refresh token")
            }
            let after = try await proxy.clear()
            // Never sent again with the same refresh token: the request may have reached the provider.
            #expect(after.faulted - before.faulted == 1, "\(mode)")

            // The store parses, still holds the sign-in and its refresh token, and the session works.
            let snapshot = try CredentialStoreFile(location: StoreLocation(path: store.path)).read()
            #expect(snapshot.keys.count == 1, "\(mode)")
            #expect(try store.field("refresh_token", of: .portal) == refreshToken, "\(mode): the refresh token changed")
            let info = try await credential().tokenInfo(minimumValidity: .zero, forceRefresh: true)
            #expect(info.isValid(for: .seconds(60)), "\(mode): no valid token after the fault was cleared")
        }
    }

    @Test(
        "`portal-auth token` against a token endpoint that stalls for 30 s: the one request waited for, not resent; exit 69, sign-in kept"
    )
    func stalledEndpointThroughTheTool() async throws {
        let (server, proxy, proxied, store) = try await Self.portalSignInThroughProxy()
        defer { proxy.stop() }
        let entryBefore = try store.entry(.portal).value

        try await proxy.arm("stall", seconds: 30)
        // --min-valid beyond what the token (aged past half its lifetime) has left: a refresh is due at once.
        let result = try await ToolRunner.run(
            ["token", "--portal", proxied.portal, "--client-id", server.clientID, "--min-valid", "100000"],
            environment: ["PORTAL_AUTH_STORE": store.path], timeout: .seconds(120))
        let state = try await proxy.clear()

        #expect(!result.timedOut)
        #expect(result.status == 69, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("may have reached") && result.stderr.contains("kept"), "\(result.stderr)")
        #expect(!result.stderr.contains(".."), "a doubled period: \(result.stderr)")
        // The stall ended with the proxy closing the connection; the request was not sent again.
        #expect(state.faulted == 1)
        #expect(try store.entry(.portal).value == entryBefore, "the stored entry changed")

        let again = try await ToolRunner.run(
            ["token", "--portal", proxied.portal, "--client-id", server.clientID, "--min-valid", "100000"],
            environment: ["PORTAL_AUTH_STORE": store.path], timeout: .seconds(30))
        #expect(again.status == 0, "\(again)")
    }

    @Test(
        "`portal-auth token` when the token endpoint answers truncated JSON or an HTML page: exit 69 (provider failing), sign-in kept",
        arguments: ["truncate", "html-200"])
    func unusableAnswerThroughTheTool(mode: String) async throws {
        let (server, proxy, proxied, store) = try await Self.portalSignInThroughProxy()
        defer { proxy.stop() }
        let entryBefore = try store.entry(.portal).value

        try await proxy.arm(mode, seconds: 30)
        let result = try await ToolRunner.run(
            ["token", "--portal", proxied.portal, "--client-id", server.clientID, "--min-valid", "100000"],
            environment: ["PORTAL_AUTH_STORE": store.path], timeout: .seconds(60))
        _ = try await proxy.clear()
        #expect(result.status == 69, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(try store.entry(.portal).value == entryBefore, "the stored entry changed")
    }
}
