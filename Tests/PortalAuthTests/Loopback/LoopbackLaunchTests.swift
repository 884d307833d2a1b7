import Foundation
import Testing
@testable import PortalAuth

@Suite("Loopback launch address")
struct LoopbackLaunchTests {
    @Test("the launch address redirects once to the target, then 404; the wait still ends on the callback")
    func launchOnce() async throws {
        let listener = try LoopbackListener(redirectURL: URL(string: "http://127.0.0.1/callback")!)
        let target = URL(string: "https://idp.example/logout?id_token_hint=secret.jwt.value&state=s-123")!
        let launch = try listener.launchURL(redirectingTo: target)
        #expect(launch.host == "127.0.0.1" && launch.port == listener.port)
        #expect(launch.path.hasPrefix("/launch-") && launch.path.count > 20)
        #expect(!launch.absoluteString.contains("secret"), "the address given to the browser command carries no secret")

        async let result = outcome(of: listener, requiresCode: false)
        let first = try await get(launch.path, port: listener.port)
        #expect(first.status == 302)
        #expect(first.headers["location"] == target.absoluteString)
        #expect(first.headers["cache-control"] == "no-store")
        let second = try await get(launch.path, port: listener.port)
        #expect(second.status == 404, "the launch address works once")
        #expect(try await get("/callback?state=s-123", port: listener.port).status == 200)
        #expect(try await result.get().state == "s-123")
    }

    @Test("without a registered launch address such a path is not found")
    func noLaunch() async throws {
        let listener = try LoopbackListener(redirectURL: URL(string: "http://127.0.0.1/callback")!)
        async let result = outcome(of: listener, requiresCode: false)
        #expect(try await get("/launch-abc", port: listener.port).status == 404)
        #expect(try await get("/callback?state=s-123", port: listener.port).status == 200)
        _ = await result
    }
}
