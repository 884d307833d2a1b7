import Foundation
import Testing
@testable import PortalAuth

@Suite("Loopback launch address")
struct LoopbackLaunchTests {
    @Test("nothing on loopback hands out a launch address: such a path is not found")
    func noLaunch() async throws {
        let listener = try LoopbackListener(redirectURL: URL(string: "http://127.0.0.1/callback")!)
        async let result = outcome(of: listener, requiresCode: false)
        #expect(try await get("/launch-abc", port: listener.port).status == 404)
        #expect(try await get("/callback?state=s-123", port: listener.port).status == 200)
        _ = await result
    }
}
