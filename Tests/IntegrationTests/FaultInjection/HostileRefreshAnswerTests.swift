import Foundation
import Testing
@testable import PortalAuth

/// Refresh answers a provider that rotates refresh tokens (the test server's OIDC face: no grace period, a rotated-out
/// token fails with `invalid_grant`) may give, seen through `fault_proxy.py`: an answer slower than `--timeout`, an
/// access token that expires as it comes (`expires_in: 0`), a malformed `expires_in`. The rotated refresh token is
/// stored every time, so the next refresh works; no expired token is printed.
@Suite(
    "Hostile refresh answers at a rotating provider", .serialized, .enabled(if: TestServer.isConfigured),
    .timeLimit(.minutes(3)))
struct HostileRefreshAnswerTests {
    /// An IAP sign-in (the server's OIDC face rotates refresh tokens) whose refreshes go through a fault proxy, and the
    /// environment and selection to run the tool with. The caller stops the proxy.
    static func iapSignInThroughProxy() async throws -> (
        proxy: FaultProxy, store: ScratchStore, environment: [String: String], selection: [String]
    ) {
        let server = try TestServer.current()
        let proxy = try await FaultProxy.start(upstream: server.base)
        do {
            let store = try ScratchStore()
            try await store.signIn(.iap, server: server)
            let (proxiedBase, realBase) = (proxy.base, server.base)
            try await store.rewrite(.iap) { entry in
                if let tokenURL = entry["token_url"]?.stringValue {
                    entry["token_url"] = .string(tokenURL.replacingOccurrences(of: realBase, with: proxiedBase))
                }
            }
            return (proxy, store, ["PORTAL_AUTH_STORE": store.path], SignInKind.iap.selector(server))
        } catch {
            proxy.stop()
            throw error
        }
    }

    @Test("refresh --timeout 2 against an answer held 4 s: the answer is awaited and stored; the next refresh works")
    func refreshSlowerThanTimeout() async throws {
        let (proxy, store, environment, selection) = try await Self.iapSignInThroughProxy()
        defer { proxy.stop() }
        let before = try store.field("refresh_token", of: .iap)
        try await proxy.arm("slow", count: 1, seconds: 4)
        let slow = try await ToolRunner.run(
            ["refresh"] + selection + ["--timeout", "2"], environment: environment, timeout: .seconds(60))
        #expect(slow.status == 0, "\(slow)")
        #expect(try await proxy.state().faulted == 1)
        #expect(try store.field("refresh_token", of: .iap) != before, "the rotated refresh token was stored")
        // The refresh token stored is the provider's current one: no invalid_grant.
        let next = try await ToolRunner.run(["refresh"] + selection, environment: environment, timeout: .seconds(60))
        #expect(next.status == 0, "\(next)")
    }

    @Test(
        "expires_in 0: token prints nothing (exit 69, saying why); expires_in \"soon\": the answer is refused but its refresh token stored; then a token"
    )
    func hostileLifetimes() async throws {
        let (proxy, store, environment, selection) = try await Self.iapSignInThroughProxy()
        defer { proxy.stop() }
        let token = ["token"] + selection + ["--min-valid", "100000"]
        // Past half its lifetime: --min-valid beyond what it has left refreshes it.
        try await store.ageAccessToken(.iap)

        let signedIn = try store.field("refresh_token", of: .iap)
        try await proxy.arm("expires-in", count: 1, value: "0")
        let expired = try await ToolRunner.run(token, environment: environment, timeout: .seconds(60))
        #expect(expired.status == 69, "\(expired)")
        #expect(expired.stdout.isEmpty, "an expired access token was printed")
        #expect(expired.stderr.contains("expired as it was issued"), "\(expired.stderr)")
        let afterExpired = try store.field("refresh_token", of: .iap)
        #expect(afterExpired != signedIn, "the refresh's rotated refresh token was stored")

        try await proxy.arm("expires-in", count: 1, value: #""soon""#)
        let malformed = try await ToolRunner.run(token, environment: environment, timeout: .seconds(60))
        #expect(malformed.status == 69, "\(malformed)")
        #expect(malformed.stdout.isEmpty)
        #expect(malformed.stderr.contains("expires_in"), "\(malformed.stderr)")
        #expect(
            try store.field("refresh_token", of: .iap) != afterExpired,
            "the refused answer's rotated refresh token was stored")

        // The stored refresh token is the provider's current one: the next refresh works (else invalid_grant, 77).
        let next = try await ToolRunner.run(
            ["token"] + selection + ["--min-valid", "60"], environment: environment, timeout: .seconds(60))
        #expect(next.status == 0, "\(next)")
        #expect(!next.stdout.isEmpty)
        #expect(try await proxy.state().faulted == 2)
    }
}
