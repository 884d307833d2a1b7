import Foundation
import Testing
@testable import PortalAuth

@Suite("Issuer discovery against the bundled server", .enabled(if: TestServer.isConfigured))
struct IssuerDiscoveryTests {
    @Test("the OIDC face's issuer and its RFC 9207 flag are found from the authorize URL")
    func discovers() async throws {
        let server = try TestServer.current()
        let issuer = try await IssuerDiscovery.issuer(
            forAuthorizeURL: URL(string: "\(server.base)/o/authorize/")!, httpClient: CurlHTTPClient())
        #expect(issuer?.identifier == server.issuer)
        #expect(issuer?.sendsIssuerInResponses == true)
    }

    @Test("an authorize URL the discovery document does not name gives no issuer")
    func mismatch() async throws {
        let server = try TestServer.current()
        let issuer = try await IssuerDiscovery.issuer(
            forAuthorizeURL: URL(string: "\(server.base)/o/other/")!, httpClient: CurlHTTPClient())
        #expect(issuer == nil)
    }
}
