import Foundation
import Testing
@testable import PortalAuth
import PortalAuthTesting
@testable import PortalAuthStore

@Suite("OAuthApplicationCredential: the client credentials grant at the portal")
struct OAuthApplicationCredentialTests {
    static let secret = "app-secret-0123456789"

    func make(
        _ portal: String = "https://gis.example.com/portal", client: ScriptedHTTPClient,
        clock: ManualClock = ManualClock(), minutes: Int? = 90
    ) async throws -> OAuthApplicationCredential {
        try await OAuthApplicationCredential.credential(
            for: URL(string: portal)!, clientID: "app-id", clientSecret: Self.secret, tokenExpirationMinutes: minutes,
            httpClient: client, now: { clock.now })
    }

    @Test("posts grant_type=client_credentials with the client ID, secret, expiration and f=json to oauth2/token")
    func request() async throws {
        let clock = ManualClock()
        let log = RequestLog()
        let client = ScriptedHTTPClient(log: log) { request, _ in
            .json(#"{"access_token":"A1","expires_in":5400}"#, for: request)
        }
        let credential = try await make("https://gis.example.com/portal/home/", client: client, clock: clock)
        let request = try #require(log.requests.first)
        #expect(request.url.absoluteString == "https://gis.example.com/portal/sharing/rest/oauth2/token")
        #expect(request.method == .post)
        #expect(request.formFields.map(\.0) == ["grant_type", "client_id", "client_secret", "expiration", "f"])
        #expect(request.formField("grant_type") == "client_credentials")
        #expect(request.formField("client_id") == "app-id")
        #expect(request.formField("client_secret") == Self.secret)
        #expect(request.formField("expiration") == "90")
        #expect(request.formField("f") == "json")

        let info = try await credential.tokenInfo
        #expect(info.accessToken == "A1")
        #expect(abs(info.expirationDate.timeIntervalSince(clock.now) - 5400) < 1)
        #expect(credential.username == nil)
        #expect(credential.canBeUsed(for: URL(string: "https://gis.example.com/portal/sharing/rest/portals/self")!))
        #expect(!credential.canBeUsed(for: URL(string: "https://gis.example.com/portal2/sharing/rest")!))
        #expect(!"\(credential)".contains(Self.secret))
    }

    @Test(
        "a wrong client ID or secret is a refusal that names the client ID, never the secret",
        arguments: [
            #"{"error":{"code":400,"error":"invalid_client","error_description":"Invalid client_id","message":"Invalid client_id","details":[]}}"#,
            #"{"error":"invalid_client","error_description":"Client authentication failed for app-secret-0123456789"}"#,
        ])
    func refused(body: String) async throws {
        let log = RequestLog()
        let client = ScriptedHTTPClient(log: log) { request, _ in
            .json(body, status: body.hasPrefix(#"{"error":{"#) ? 200 : 401, for: request)
        }
        let error = try await #require(throws: TokenServiceError.self) { try await make(client: client) }
        #expect(error.kind == .credentialsRefused)
        #expect(error.description.contains("the client ID app-id and its secret"))
        #expect(error.description.contains("invalid_client"))
        #expect(!error.description.contains(Self.secret))
    }

    @Test("a portal failure stays a TokenEndpointError")
    func serverFailure() async throws {
        let log = RequestLog()
        let client = ScriptedHTTPClient(log: log) { request, _ in
            .json(#"{"error":"temporarily_unavailable"}"#, status: 503, for: request)
        }
        let error = try await #require(throws: TokenEndpointError.self) { try await make(client: client) }
        #expect(error.kind == .serverFailure)
    }

    @Test("an unusable portal URL or empty client ID is refused before any request")
    func invalidConfiguration() async throws {
        let log = RequestLog()
        let client = ScriptedHTTPClient(log: log) { request, _ in .json("{}", for: request) }
        await #expect(throws: ConfigurationError.self) {
            try await make("http://gis.example.com/portal", client: client)
        }
        await #expect(throws: ConfigurationError.self) {
            try await OAuthApplicationCredential.credential(
                for: URL(string: "https://gis.example.com/portal")!, clientID: " ", clientSecret: "x",
                httpClient: client)
        }
        #expect(log.requests.isEmpty)
    }

    @Test("an expiring application token is asked for again with the kept secret")
    func regeneration() async throws {
        let clock = ManualClock()
        let log = RequestLog()
        let client = ScriptedHTTPClient(log: log) { request, index in
            .json(#"{"access_token":"A\#(index + 1)","expires_in":600}"#, for: request)
        }
        let credential = try await make(client: client, clock: clock, minutes: nil)
        #expect(log.requests[0].formField("expiration") == nil)
        clock.advance(by: .seconds(530))
        #expect(try await credential.tokenInfo.accessToken == "A1")
        clock.advance(by: .seconds(20))
        #expect(try await credential.tokenInfo.accessToken == "A2")
        #expect(log.requests[1].formField("client_secret") == Self.secret)
    }

    @Test("without expires_in the requested lifetime, else two hours, is assumed")
    func defaultLifetime() async throws {
        let clock = ManualClock()
        let log = RequestLog()
        let client = ScriptedHTTPClient(log: log) { request, _ in .json(#"{"access_token":"A"}"#, for: request) }
        let asked = try await make(client: client, clock: clock, minutes: 30)
        #expect(abs(try await asked.tokenInfo.expirationDate.timeIntervalSince(clock.now) - 1800) < 1)
        let unasked = try await make(client: client, clock: clock, minutes: nil)
        #expect(abs(try await unasked.tokenInfo.expirationDate.timeIntervalSince(clock.now) - 7200) < 1)
    }
}
