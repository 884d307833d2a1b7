import Foundation
import Testing
@testable import PortalAuth
import PortalAuthTesting
@testable import PortalAuthStore

@Suite("TokenCredential: generateToken and token-service discovery")
struct TokenCredentialTests {
    static let password = "s3cret-Passw0rd"

    /// A generateToken answer valid for `lifetime` seconds from `clock`.
    static func tokenAnswer(_ token: String, clock: ManualClock, lifetime: TimeInterval = 3600, ssl: Bool = false)
        -> String
    {
        let expires = Int64((clock.now.timeIntervalSince1970 + lifetime) * 1000)
        return #"{"token":"\#(token)","expires":\#(expires),"ssl":\#(ssl)}"#
    }

    func make(_ url: String, client: ScriptedHTTPClient, clock: ManualClock = ManualClock(), minutes: Int? = 30)
        async throws -> TokenCredential
    {
        try await TokenCredential.credential(
            for: URL(string: url)!, username: "alice", password: Self.password, tokenExpirationMinutes: minutes,
            referer: TokenCredential.defaultReferer, httpClient: client, now: { clock.now })
    }

    // MARK: - The request

    @Test("a portal URL posts the generateToken form to {portal}/sharing/rest/generateToken")
    func formFields() async throws {
        let clock = ManualClock()
        let log = RequestLog()
        let client = ScriptedHTTPClient(log: log) { request, _ in
            .json(Self.tokenAnswer("T1", clock: clock, ssl: true), for: request)
        }
        let credential = try await make("https://gis.example.com/portal", client: client, clock: clock)

        let request = try #require(log.requests.first)
        #expect(log.requests.count == 1)
        #expect(request.method == .post)
        #expect(request.url.absoluteString == "https://gis.example.com/portal/sharing/rest/generateToken")
        #expect(request.headers["Content-Type"] == "application/x-www-form-urlencoded")
        #expect(request.formFields.map(\.0) == ["username", "password", "expiration", "client", "referer", "f"])
        #expect(request.formField("username") == "alice")
        #expect(request.formField("password") == Self.password)
        #expect(request.formField("expiration") == "30")
        #expect(request.formField("client") == "referer")
        #expect(request.formField("referer") == "app://portal-auth")
        #expect(request.formField("f") == "json")
        #expect(request.url.query == nil, "the password never goes into the URL")

        let info = try await credential.tokenInfo
        #expect(info.accessToken == "T1")
        #expect(info.isSSLRequired)
        #expect(abs(info.expirationDate.timeIntervalSince(clock.now) - 3600) < 1)
        #expect(credential.username == "alice")
        #expect(credential.referer == "app://portal-auth")
        #expect(!"\(credential)".contains(Self.password))
    }

    @Test("without an expiration the field is left out and the server's default applies")
    func noExpiration() async throws {
        let clock = ManualClock()
        let log = RequestLog()
        let client = ScriptedHTTPClient(log: log) { request, _ in .json(#"{"token":"T"}"#, for: request) }
        let credential = try await make("https://gis.example.com/portal", client: client, clock: clock, minutes: nil)
        #expect(log.requests.first?.formField("expiration") == nil)
        let info = try await credential.tokenInfo
        #expect(abs(info.expirationDate.timeIntervalSince(clock.now) - 3600) < 1, "no expires: the 60-minute default")
        #expect(!info.isSSLRequired)
    }

    @Test(
        "portal URLs in their usual shapes all find {portal}/sharing/rest/generateToken",
        arguments: [
            ("https://gis.example.com/portal", "https://gis.example.com/portal"),
            ("https://gis.example.com/portal/", "https://gis.example.com/portal"),
            ("https://gis.example.com/portal/home", "https://gis.example.com/portal"),
            ("https://gis.example.com/portal/sharing/rest", "https://gis.example.com/portal"),
            ("https://gis.example.com/portal/sharing/rest/content/items/abc?f=json", "https://gis.example.com/portal"),
            ("https://www.arcgis.com", "https://www.arcgis.com"),
        ])
    func portalShapes(url: String, portal: String) async throws {
        let clock = ManualClock()
        let log = RequestLog()
        let client = ScriptedHTTPClient(log: log) { request, _ in
            .json(Self.tokenAnswer("T", clock: clock), for: request)
        }
        let credential = try await make(url, client: client, clock: clock)
        #expect(credential.tokenServiceURL.absoluteString == portal + "/sharing/rest/generateToken")
        #expect(credential.canBeUsed(for: URL(string: portal + "/sharing/rest/portals/self")!))
    }

    // MARK: - Discovery on a server

    @Test("a server URL reads {root}/rest/info?f=json and posts to its tokenServicesUrl")
    func serverDiscovery() async throws {
        let clock = ManualClock()
        let log = RequestLog()
        let client = ScriptedHTTPClient(log: log) { request, index in
            if index == 0 {
                return .json(
                    #"{"currentVersion":11.3,"authInfo":{"isTokenBasedSecurity":true,"tokenServicesUrl":"https://gis.example.com/portal/sharing/rest/generateToken","shortLivedTokenValidity":60}}"#,
                    for: request)
            }
            return .json(Self.tokenAnswer("T", clock: clock), for: request)
        }
        let credential = try await make(
            "https://gis.example.com/server/rest/services/Roads/MapServer/0?f=json", client: client, clock: clock)
        #expect(
            log.requests.map(\.url.absoluteString) == [
                "https://gis.example.com/server/rest/info?f=json",
                "https://gis.example.com/portal/sharing/rest/generateToken",
            ])
        #expect(log.requests[0].method == .get)
        #expect(log.requests[0].body == nil, "nothing secret goes to the discovery request")
        #expect(
            credential.canBeUsed(for: URL(string: "https://gis.example.com/server/rest/services/Other/FeatureServer")!))
        #expect(!credential.canBeUsed(for: URL(string: "https://gis.example.com/server2/rest/services")!))
        #expect(!credential.canBeUsed(for: URL(string: "https://other.example.com/server/rest/services")!))
    }

    @Test("a standalone server's tokens/ folder gets generateToken appended")
    func standaloneTokensFolder() async throws {
        let clock = ManualClock()
        let log = RequestLog()
        let client = ScriptedHTTPClient(log: log) { request, index in
            index == 0
                ? .json(
                    #"{"authInfo":{"isTokenBasedSecurity":true,"tokenServicesUrl":"https://gis.example.com/arcgis/tokens/"}}"#,
                    for: request)
                : .json(Self.tokenAnswer("T", clock: clock), for: request)
        }
        let credential = try await make("https://gis.example.com/arcgis/rest/services", client: client, clock: clock)
        #expect(credential.tokenServiceURL.absoluteString == "https://gis.example.com/arcgis/tokens/generateToken")
    }

    @Test(
        "rest/info answers that name no token service are reported",
        arguments: [
            (#"{"authInfo":{"isTokenBasedSecurity":false}}"#, TokenServiceError.Kind.notTokenSecured),
            (#"{"authInfo":{"isTokenBasedSecurity":true}}"#, .notTokenSecured),
            (#"{"currentVersion":11.3}"#, .discoveryFailed),
            (#"{"error":{"code":500,"message":"Internal error","details":[]}}"#, .discoveryFailed),
            ("<html>not json</html>", .discoveryFailed),
            (#"{"authInfo":{"tokenServicesUrl":"http://gis.example.com/arcgis/tokens/"}}"#, .discoveryFailed),
        ])
    func discoveryFailures(body: String, kind: TokenServiceError.Kind) async throws {
        let log = RequestLog()
        let client = ScriptedHTTPClient(log: log) { request, _ in .json(body, for: request) }
        let error = try await #require(throws: TokenServiceError.self) {
            try await make("https://gis.example.com/arcgis/rest/services", client: client)
        }
        #expect(error.kind == kind, "\(error)")
        #expect(log.requests.count == 1, "no password is sent when discovery fails")
    }

    @Test("a URL that is not an https portal or server is refused before any request")
    func invalidURL() async throws {
        let log = RequestLog()
        let client = ScriptedHTTPClient(log: log) { request, _ in .json("{}", for: request) }
        let error = try await #require(throws: TokenServiceError.self) {
            try await make("http://gis.example.com/portal", client: client)
        }
        #expect(error.kind == .invalidURL)
        #expect(error.category == .usage)
        #expect(log.requests.isEmpty)
    }

    // MARK: - Errors of generateToken

    @Test("a wrong password (the 200 envelope 400 Unable to generate token.) is a clear refusal without the password")
    func badPassword() async throws {
        let log = RequestLog()
        let client = ScriptedHTTPClient(log: log) { request, _ in
            .json(
                #"{"error":{"code":400,"message":"Unable to generate token.","details":["Invalid username or password."]}}"#,
                for: request)
        }
        let error = try await #require(throws: TokenServiceError.self) {
            try await make("https://gis.example.com/portal", client: client)
        }
        #expect(error.kind == .credentialsRefused)
        #expect(error.category == .refused)
        #expect(
            error.description
                == "The token service https://gis.example.com/portal/sharing/rest/generateToken refused the username and password of alice: ArcGIS error 400 Unable to generate token. Invalid username or password. Check them and try again."
        )
        #expect(!error.description.contains(Self.password))
    }

    @Test("a server that repeats the password in its message never gets it printed")
    func passwordEchoRedacted() async throws {
        let log = RequestLog()
        let client = ScriptedHTTPClient(log: log) { request, _ in
            .json(
                #"{"error":{"code":400,"message":"Unable to generate token.","details":["bad password \#(Self.password)"]}}"#,
                for: request)
        }
        let error = try await #require(throws: TokenServiceError.self) {
            try await make("https://gis.example.com/portal", client: client)
        }
        #expect(!error.description.contains(Self.password))
        #expect(error.description.contains("<redacted>"))
    }

    @Test(
        "failures that are not refusals stay TokenEndpointErrors",
        arguments: [
            (
                #"{"error":{"code":500,"message":"Server error","details":[]}}"#, 200,
                TokenEndpointError.Kind.serverFailure
            ),
            ("<html><title>502 Bad Gateway</title></html>", 502, .serverFailure),
            (#"{"expires":1}"#, 200, .invalidResponse),
            (#"{"token":"T","expires":"soon"}"#, 200, .invalidResponse),
            ("not json", 200, .invalidResponse),
            ("", 404, .unexpectedStatus),
        ])
    func otherFailures(body: String, status: Int, kind: TokenEndpointError.Kind) async throws {
        let log = RequestLog()
        let client = ScriptedHTTPClient(log: log) { request, _ in .json(body, status: status, for: request) }
        let error = try await #require(throws: TokenEndpointError.self) {
            try await make("https://gis.example.com/portal", client: client)
        }
        #expect(error.kind == kind, "\(error)")
        #expect(!error.description.contains(Self.password))
    }

    // MARK: - Renewal

    @Test("an expiring token is generated again with the kept password; a valid one is reused")
    func regeneration() async throws {
        let clock = ManualClock()
        let log = RequestLog()
        let client = ScriptedHTTPClient(log: log) { request, index in
            .json(Self.tokenAnswer("T\(index + 1)", clock: clock, lifetime: 600), for: request)
        }
        let credential = try await make("https://gis.example.com/portal", client: client, clock: clock)
        #expect(try await credential.tokenInfo.accessToken == "T1")

        clock.advance(by: .seconds(500))  // 100 s left: more than the one-minute margin
        #expect(try await credential.tokenInfo.accessToken == "T1")
        #expect(log.requests.count == 1)

        clock.advance(by: .seconds(50))  // 50 s left: renewed
        #expect(try await credential.tokenInfo.accessToken == "T2")
        #expect(log.requests.count == 2)
        #expect(log.requests[1].formField("password") == Self.password)
        #expect(log.requests[1].formField("expiration") == "30")

        #expect(try await credential.tokenInfo(forceRegeneration: true).accessToken == "T3", "a 498 forces a new token")
    }

    @Test("a short-lived token is renewed in the last fifth of its life, not on every use")
    func shortLivedMargin() async throws {
        let clock = ManualClock()
        let log = RequestLog()
        let client = ScriptedHTTPClient(log: log) { request, index in
            .json(Self.tokenAnswer("T\(index + 1)", clock: clock, lifetime: 100), for: request)
        }
        let credential = try await make("https://gis.example.com/portal", client: client, clock: clock, minutes: 1)
        clock.advance(by: .seconds(79))
        #expect(try await credential.tokenInfo.accessToken == "T1")
        clock.advance(by: .seconds(2))
        #expect(try await credential.tokenInfo.accessToken == "T2")
    }

    @Test("callers that find the token expired at once share one request")
    func concurrentRenewal() async throws {
        let clock = ManualClock()
        let log = RequestLog()
        let client = ScriptedHTTPClient(log: log, delay: .milliseconds(200)) { request, index in
            .json(Self.tokenAnswer("T\(index + 1)", clock: clock, lifetime: 600), for: request)
        }
        let credential = try await make("https://gis.example.com/portal", client: client, clock: clock)
        clock.advance(by: .seconds(700))
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<8 { group.addTask { try await credential.tokenInfo.accessToken } }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(Set(tokens) == ["T2"])
        #expect(log.requests.count == 2)
    }

    @Test("a failed renewal is reported and the next use tries again")
    func failedRenewal() async throws {
        let clock = ManualClock()
        let log = RequestLog()
        let client = ScriptedHTTPClient(log: log) { request, index in
            if index == 1 {
                return .json(
                    #"{"error":{"code":400,"message":"Unable to generate token.","details":[]}}"#, for: request)
            }
            return .json(Self.tokenAnswer("T\(index + 1)", clock: clock, lifetime: 600), for: request)
        }
        let credential = try await make("https://gis.example.com/portal", client: client, clock: clock)
        clock.advance(by: .seconds(600))
        await #expect(throws: TokenServiceError.self) { try await credential.tokenInfo }
        #expect(try await credential.tokenInfo.accessToken == "T3")
    }
}
