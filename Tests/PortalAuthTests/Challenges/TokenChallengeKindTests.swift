import Foundation
import Testing
@testable import PortalAuth
import PortalAuthTesting

/// Which ArcGIS challenge kind a 498/499 raises: `.token` for a stand-alone server, `.oAuthOrToken` otherwise.
@Suite("Token challenge kind")
struct TokenChallengeKindTests {
    @Test(
        "rest/info documents",
        arguments: [
            (
                #"{"authInfo":{"isTokenBasedSecurity":true,"tokenServicesUrl":"https://h/server/tokens/"}}"#,
                ArcGISAuthenticationChallenge.Kind.token
            ),
            (
                #"{"owningSystemUrl":"https://h/portal","authInfo":{"isTokenBasedSecurity":true,"tokenServicesUrl":"https://h/portal/sharing/rest/generateToken"}}"#,
                .oAuthOrToken
            ),
            (#"{"owningSystemUrl":"","authInfo":{"isTokenBasedSecurity":true}}"#, .token),
            (#"{"authInfo":{"isTokenBasedSecurity":false}}"#, .oAuthOrToken),
            (#"{"currentVersion":11.3}"#, .oAuthOrToken),
            ("not json", .oAuthOrToken),
        ])
    func serverInfo(body: String, expected: ArcGISAuthenticationChallenge.Kind) {
        #expect(TokenChallengeKind.kind(ofServerInfo: Data(body.utf8)) == expected)
    }

    @Test(
        "a portal URL is .oAuthOrToken without a request; a server URL reads its rest/info once; a failing one is .oAuthOrToken"
    )
    func requests() async {
        let standalone = ScriptedHTTPClient(respond: { request, _ in
            SignOutFakes.response(
                body: #"{"authInfo":{"isTokenBasedSecurity":true,"tokenServicesUrl":"https://h/server/tokens/"}}"#,
                url: request.url)
        })
        #expect(
            await TokenChallengeKind.kind(
                for: URL(string: "https://h/portal/sharing/rest/portals/self")!, httpClient: standalone)
                == .oAuthOrToken)
        #expect(standalone.requests.isEmpty)
        #expect(
            await TokenChallengeKind.kind(
                for: URL(string: "https://h/server/rest/services/Roads/MapServer")!, httpClient: standalone) == .token)
        #expect(standalone.requests.map(\.url.absoluteString) == ["https://h/server/rest/info?f=json"])
        let failing = ScriptedHTTPClient([ScriptedHTTPClient.unreachable()])
        #expect(
            await TokenChallengeKind.kind(for: URL(string: "https://h/server/rest/services")!, httpClient: failing)
                == .oAuthOrToken)
    }
}
