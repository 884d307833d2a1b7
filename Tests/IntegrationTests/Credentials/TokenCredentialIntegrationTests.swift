import Foundation
import Testing
@testable import PortalAuth

/// `TokenCredential` and `OAuthApplicationCredential` against the bundled server's portal face.
@Suite("Token and application credentials against the real server", .serialized, .enabled(if: TestServer.isConfigured))
struct TokenCredentialIntegrationTests {
    @Test(
        "generateToken with the right password gives a token portals/self accepts, from a portal or a server URL",
        arguments: [
            "/", "/sharing/rest/portals/self", "/rest/services",
        ])
    func goodPassword(suffix: String) async throws {
        let server = try TestServer.current()
        let url = URL(string: server.portal + (suffix == "/" ? "" : suffix))!
        let before = Date()
        let credential = try await TokenCredential.credential(
            for: url, username: "alice", password: try server.password, tokenExpirationMinutes: 5)
        let info = try await credential.tokenInfo
        #expect(credential.tokenServiceURL.absoluteString == "\(server.portal)/sharing/rest/generateToken")
        #expect(abs(info.expirationDate.timeIntervalSince(before) - 300) < 10, "expiration: 5 minutes")
        #expect(!info.isSSLRequired)
        #expect(try await server.portalSelf(token: info.accessToken)["user"]?["username"]?.stringValue == "alice")
        #expect(credential.canBeUsed(for: URL(string: "\(server.portal)/sharing/rest/portals/self")!))
        #expect(credential.canBeUsed(for: URL(string: "\(server.portal)/rest/services/Roads/MapServer")!))
    }

    @Test("generateToken with a wrong password is refused without repeating it, and no token is made")
    func badPassword() async throws {
        let server = try TestServer.current()
        let error = try await #require(throws: TokenServiceError.self) {
            try await TokenCredential.credential(
                for: URL(string: server.portal)!, username: "alice", password: "not-alices-password")
        }
        #expect(error.kind == .credentialsRefused)
        #expect(error.description.contains("Unable to generate token."))
        #expect(error.description.contains("alice"))
        #expect(!error.description.contains("not-alices-password"))
    }

    @Test("a token the server expired is generated again with the kept password")
    func regenerated() async throws {
        let server = try TestServer.current()
        let credential = try await TokenCredential.credential(
            for: URL(string: server.portal)!, username: "alice", password: try server.password)
        let first = try await credential.tokenInfo.accessToken
        try await server.expireAccessTokens()
        #expect(try await server.portalSelf(token: first)["error"]?["code"]?.integerValue == 498)
        let second = try await credential.tokenInfo(forceRegeneration: true).accessToken
        #expect(second != first)
        #expect(try await server.portalSelf(token: second)["user"]?["username"]?.stringValue == "alice")
    }

    @Test("the client credentials grant gives an application token portals/self accepts")
    func applicationToken() async throws {
        let server = try TestServer.current()
        let credential = try await OAuthApplicationCredential.credential(
            for: URL(string: server.portal)!, clientID: server.appClientID, clientSecret: try server.appSecret,
            tokenExpirationMinutes: 30)
        let info = try await credential.tokenInfo
        #expect(abs(info.expirationDate.timeIntervalSinceNow - 1800) < 10)
        let portal = try await server.portalSelf(token: info.accessToken)
        #expect(portal["appInfo"]?["appId"]?.stringValue == server.appClientID)
        #expect(portal["user"] == nil)

        try await server.expireAccessTokens()
        let renewed = try await credential.tokenInfo(forceRegeneration: true).accessToken
        #expect(try await server.portalSelf(token: renewed)["appInfo"]?["appId"]?.stringValue == server.appClientID)
    }

    @Test("a wrong client secret is refused without repeating it")
    func badSecret() async throws {
        let server = try TestServer.current()
        let error = try await #require(throws: TokenServiceError.self) {
            try await OAuthApplicationCredential.credential(
                for: URL(string: server.portal)!, clientID: server.appClientID, clientSecret: "wrong-secret-value")
        }
        #expect(error.kind == .credentialsRefused)
        #expect(error.description.contains("invalid_client"))
        #expect(!error.description.contains("wrong-secret-value"))
    }
}
