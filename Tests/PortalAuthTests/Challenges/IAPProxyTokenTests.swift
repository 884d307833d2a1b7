import Foundation
import Testing
@testable import PortalAuth
import PortalAuthTesting
@testable import PortalAuthCore
@testable import PortalAuthTransport

/// Which IAP token `data(for:)` sends to the hosts behind a proxy, and what happens when the proxy refuses it.
@Suite("IAP token sent to the proxy")
struct IAPProxyTokenTests {
    static let url = URL(string: "https://maps.example.com/portal/sharing/rest/portals/self")!
    /// The records' `updatedAt` (when their tokens were issued).
    static let issued = Date(timeIntervalSince1970: 1_800_000_000)

    /// A stored IAP sign-in whose ID token is a valid JWT for its client, expiring at `idTokenExpiry`.
    static func record(idTokenExpiry: Date = Date().addingTimeInterval(3600)) -> StoredCredential {
        var record = SignOutFakes.record(.iap)
        record.idToken = idToken("ID-1", exp: idTokenExpiry)
        record.idTokenExpiresAt = idTokenExpiry
        // The provider lists unsigned ID tokens (IDTokenTests.token): refreshed ones are accepted.
        record.signsIDTokensWithNone = true
        return record
    }

    /// An unsigned ID token for the IAP client, told apart by its `jti`.
    static func idToken(_ id: String, exp: Date = Date().addingTimeInterval(3600)) -> String {
        let base = IDTokenTests.payload(
            aud: .string("iap-client"), nonce: nil, exp: exp.timeIntervalSince1970.rounded(.down),
            iss: "https://idp.example.com")
        guard case .object(var object) = base else { return "" }
        object["jti"] = .string(id)
        object["iat"] = .number(Date().timeIntervalSince1970.rounded(.down) - 5)
        return IDTokenTests.token(.object(object))
    }

    static func tokens(_ access: String, refresh: String, idToken: String?) -> TransportResponse {
        var object: JSONObject = [
            "access_token": .string(access), "refresh_token": .string(refresh), "expires_in": .integer(3600),
            "token_type": .string("Bearer"),
        ]
        if let idToken { object["id_token"] = .string(idToken) }
        return TransportResponse(
            statusCode: 200, headers: [("Content-Type", "application/json")],
            body: Data(JSONValue.object(object).serialized(indent: 0).utf8),
            url: URL(string: "https://idp.example.com/oauth2/token")!)
    }

    /// A manager whose clock reads `secondsAfterIssue` after the stored tokens were issued.
    static func manager(_ http: ScriptedHTTPClient, secondsAfterIssue: TimeInterval) -> AuthenticationManager {
        var settings = SignOutFakes.settings(http: http)
        settings.clock = ManualClock(start: issued.addingTimeInterval(secondsAfterIssue))
        return AuthenticationManager(settings: settings)
    }

    @Test(
        "the ID token goes as Authorization: Bearer by default, as the SDK applies it; tokenSentToProxy = .accessToken sends the access token"
    )
    func idTokenByDefault() async throws {
        let http = ScriptedHTTPClient(respond: { request, _ in ChallengeFakes.answer("{}", to: request) })
        let manager = Self.manager(http, secondsAfterIssue: 600)
        let record = Self.record()
        let credential = IAPCredential(record: record, persistence: nil, settings: SignOutFakes.settings(http: http))
        manager.arcGISCredentialStore.add(credential)
        _ = try await manager.data(for: .get(Self.url))
        credential.tokenSentToProxy = .accessToken
        _ = try await manager.data(for: .get(Self.url))
        #expect(
            http.requests.map { $0.headers["Authorization"] } == ["Bearer \(record.idToken!)", "Bearer ACCESS-SECRET"])
    }

    @Test("an expired ID token is refreshed before it is sent, never sent expired")
    func expiredIDTokenRefreshedFirst() async throws {
        let fresh = Self.idToken("ID-2")
        let http = ScriptedHTTPClient(respond: { request, _ in
            if request.url.host == "idp.example.com" { return Self.tokens("ACCESS-2", refresh: "R2", idToken: fresh) }
            return ChallengeFakes.answer("{}", to: request)
        })
        let manager = Self.manager(http, secondsAfterIssue: 600)
        // The access token is still valid for an hour; only the ID token has expired.
        let record = Self.record(idTokenExpiry: Date().addingTimeInterval(-10))
        manager.arcGISCredentialStore.add(
            IAPCredential(record: record, persistence: nil, settings: SignOutFakes.settings(http: http)))
        #expect(try await manager.data(for: .get(Self.url)).statusCode == 200)
        #expect(http.requests.map { $0.url.host ?? "" } == ["idp.example.com", "maps.example.com"])
        #expect(http.requests[1].headers["Authorization"] == "Bearer \(fresh)")
    }

    @Test(
        "a refused token younger than a minute is not refreshed: a distinct error naming the causes, no refresh token spent"
    )
    func freshTokenRefused() async throws {
        let http = ScriptedHTTPClient(respond: { request, _ in
            if request.url.host == "idp.example.com" {
                return Self.tokens("ACCESS-2", refresh: "R2", idToken: Self.idToken("ID-2"))
            }
            return ChallengeFakes.answer("", status: 401, to: request)
        })
        let manager = Self.manager(http, secondsAfterIssue: 30)
        manager.arcGISCredentialStore.add(
            IAPCredential(record: Self.record(), persistence: nil, settings: SignOutFakes.settings(http: http)))
        let handler = ChallengeFakes.ArcGISHandler { _, _ in .continueWithoutCredential }
        manager.arcGISAuthenticationChallengeHandler = handler
        let error = try await #require(throws: AuthenticationChallengeError.self) {
            try await manager.data(for: .get(Self.url))
        }
        #expect(error.kind == .iapTokenRefused)
        #expect(error.refusedIAPToken == .idToken)
        #expect(error.category == .invalidContent)  // signing in again would not help: not 77
        #expect(error.description.contains("client ID or scope"))
        #expect(error.description.contains("expects the access token instead"))
        #expect(!error.description.contains("ACCESS-SECRET") && !error.description.contains("ID-1"))
        #expect(http.requests.map { $0.url.host ?? "" } == ["maps.example.com"])
        #expect(handler.challenges.isEmpty)
    }

    @Test("a refused token older than a minute is refreshed once; refused again, the distinct error")
    func refusedAfterOneRefresh() async throws {
        let http = ScriptedHTTPClient(respond: { request, _ in
            if request.url.host == "idp.example.com" {
                return Self.tokens("ACCESS-2", refresh: "R2", idToken: Self.idToken("ID-2"))
            }
            return ChallengeFakes.answer(
                "", status: 302,
                headers: [("Location", "https://idp.example.com/authorize?client_id=p&response_type=code")], to: request
            )
        })
        let manager = Self.manager(http, secondsAfterIssue: 120)
        let credential = IAPCredential(
            record: Self.record(), persistence: nil, settings: SignOutFakes.settings(http: http))
        credential.tokenSentToProxy = .accessToken
        manager.arcGISCredentialStore.add(credential)
        let error = try await #require(throws: AuthenticationChallengeError.self) {
            try await manager.data(for: .get(Self.url))
        }
        #expect(error.kind == .iapTokenRefused)
        #expect(error.refusedIAPToken == .accessToken)
        #expect(error.description.contains("expects the ID token instead"))
        #expect(http.requests.map { $0.url.host ?? "" } == ["maps.example.com", "idp.example.com", "maps.example.com"])
        #expect(http.requests.map { $0.headers["Authorization"] } == ["Bearer ACCESS-SECRET", nil, "Bearer ACCESS-2"])
    }

    @Test(
        "an SDK-style handler is asked for a proxy that redirects to an authorization request, with nothing registered")
    func sdkStyleHandlerAsked() async throws {
        let http = ScriptedHTTPClient(respond: { request, _ in
            if request.headers["Authorization"] == "Bearer ACCESS-SECRET" {
                return ChallengeFakes.answer("{}", to: request)
            }
            return ChallengeFakes.answer(
                "", status: 302,
                headers: [("Location", "https://sso.other.example/auth?client_id=p&response_type=code")], to: request)
        })
        let manager = Self.manager(http, secondsAfterIssue: 0)
        let handler = ChallengeFakes.ArcGISHandler { challenge, _ in
            let credential = SignOutFakes.iapCredential(http: http)
            credential.tokenSentToProxy = .accessToken
            return challenge.kind == .iap ? .continueWithCredential(credential) : .continueWithoutCredential
        }
        manager.arcGISAuthenticationChallengeHandler = handler
        #expect(try await manager.data(for: .get(URL(string: "https://maps.example.com/app/")!)).statusCode == 200)
        #expect(handler.challenges.map(\.kind) == [.iap])
    }
}
