import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthStore

@Suite("PregeneratedTokenCredential")
struct PregeneratedTokenCredentialTests {
    @Test("holds the token for its server and referer until it expires")
    func holdsToken() async throws {
        let info = try #require(
            TokenInfo(accessToken: "P", expirationDate: Date().addingTimeInterval(600), isSSLRequired: true))
        let credential = PregeneratedTokenCredential(
            url: URL(string: "https://gis.example.com/server/rest/services/Roads/MapServer")!, tokenInfo: info,
            referer: "https://app.example.com")
        #expect(try await credential.tokenInfo == info)
        #expect(credential.referer == "https://app.example.com")
        #expect(credential.canBeUsed(for: URL(string: "https://gis.example.com/server/rest/services/Other/MapServer")!))
        #expect(!credential.canBeUsed(for: URL(string: "https://gis.example.com/portal/sharing/rest")!))
        #expect(!"\(credential)".contains("\"P\""))
        #expect(PregeneratedTokenCredential(url: URL(string: "https://h/portal")!, tokenInfo: info).referer == "")
    }

    @Test("an expired pregenerated token asks for a new one instead of being sent")
    func expired() async throws {
        let info = try #require(
            TokenInfo(accessToken: "P", expirationDate: Date().addingTimeInterval(-1), isSSLRequired: false))
        let credential = PregeneratedTokenCredential(
            url: URL(string: "https://gis.example.com/portal")!, tokenInfo: info)
        let error = try await #require(throws: CredentialError.self) { try await credential.tokenInfo }
        #expect(error.requiresSignIn)
        #expect(error.description.contains("generate a new token"))
        await #expect(throws: CredentialError.self) { try await credential.validTokenInfo(renew: true) }
    }
}
