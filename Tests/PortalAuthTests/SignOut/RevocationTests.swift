import Foundation
import Testing
@testable import PortalAuth
import PortalAuthTesting
@testable import PortalAuthCore

/// A revocation endpoint's answer and what the client must make of it.
struct RevocationCase: CustomTestStringConvertible, Sendable {
    let name: String
    let status: Int
    let body: String
    var contentType = "application/json"
    /// nil: success.
    let category: ErrorCategory?
    /// Texts the message must contain.
    var mentions: [String] = []

    var testDescription: String { name }
}

@Suite("Token revocation: portal revokeToken and RFC 7009")
struct RevocationTests {
    typealias Fakes = SignOutFakes

    // MARK: - Requests

    @Test("revokeToken posts client_id, the refresh token as auth_token, token_type_hint and f=json to revokeToken")
    func portalRequest() async throws {
        let http = Fakes.HTTP(body: #"{"success": true}"#)
        try await Fakes.portalCredential(http: http).revokeToken()
        let request = try #require(http.requests.first)
        #expect(http.requests.count == 1)
        #expect(request.method == .post)
        #expect(request.url == Fakes.revokeURL)
        #expect(request.headers["Content-Type"] == "application/x-www-form-urlencoded")
        #expect(
            Fakes.fields(of: request) == [
                "client_id": "portal-client", "auth_token": "REFRESH-SECRET", "token_type_hint": "refresh_token",
                "f": "json",
            ])
    }

    @Test("without a refresh token the access token is revoked, hinted as such")
    func accessTokenOnly() async throws {
        let http = Fakes.HTTP(body: #"{"success": true}"#)
        try await Fakes.portalCredential(Fakes.record(.oauthUser, refreshToken: nil), http: http).revokeToken()
        let fields = Fakes.fields(of: try #require(http.requests.first))
        #expect(fields["auth_token"] == "ACCESS-SECRET")
        #expect(fields["token_type_hint"] == "access_token")
    }

    @Test("RFC 7009 form: token, token_type_hint, client_id; a 200 with any body is success")
    func rfc7009Request() async throws {
        let http = Fakes.HTTP(body: "", contentType: "text/html")
        let endpoint = URL(string: "https://idp.example.com/oauth2/revoke")!
        let revocation = TokenRevocation(
            style: .rfc7009, endpoint: endpoint, record: Fakes.record(.iap), target: "the IAP x")
        try await revocation.send(with: http, policy: RefreshPolicy(attempts: 1))
        let request = try #require(http.requests.first)
        #expect(request.url == endpoint)
        #expect(
            Fakes.fields(of: request) == [
                "token": "REFRESH-SECRET", "token_type_hint": "refresh_token", "client_id": "iap-client",
            ])
    }

    // MARK: - Answers

    static let portalCases: [RevocationCase] = [
        RevocationCase(name: "success", status: 200, body: #"{"success": true}"#, category: nil),
        RevocationCase(
            name: "success as text/plain, as older portals send", status: 200, body: #"{"success":true}"#,
            contentType: "text/plain", category: nil),
        RevocationCase(
            name: "envelope with HTTP 200 is a refusal", status: 200,
            body:
                #"{"error":{"code":400,"error":"invalid_client","error_description":"Invalid client_id","message":"Invalid client_id","details":[]}}"#,
            category: .refused, mentions: ["ArcGIS error 400", "Invalid client_id", "invalid_client", "revokeToken"]),
        RevocationCase(
            name: "envelope with a 5xx code is a server failure", status: 200,
            body: #"{"error":{"code":500,"message":"Unable to revoke token.","details":[]}}"#,
            category: .unavailable, mentions: ["Unable to revoke token."]),
        RevocationCase(
            name: "success false", status: 200, body: #"{"success": false}"#, category: .refused, mentions: ["success"]),
        RevocationCase(
            name: "HTML page with HTTP 200", status: 200, body: "<html><title>Sign in</title></html>",
            contentType: "text/html", category: .invalidContent),
        RevocationCase(
            name: "HTTP 503", status: 503, body: "busy", contentType: "text/plain", category: .unavailable,
            mentions: ["HTTP 503"]),
        RevocationCase(
            name: "OAuth error with HTTP 400", status: 400, body: #"{"error":"invalid_request"}"#, category: .refused,
            mentions: ["invalid_request"]),
        RevocationCase(
            name: "bare 404", status: 404, body: "", contentType: "text/plain", category: .unavailable,
            mentions: ["HTTP 404"]),
    ]

    @Test("portal answers", arguments: portalCases)
    func portalAnswers(_ answer: RevocationCase) async throws {
        let http = Fakes.HTTP(status: answer.status, body: answer.body, contentType: answer.contentType)
        let credential = Fakes.portalCredential(http: http)
        do {
            try await credential.revokeToken()
            #expect(answer.category == nil, "expected a failure")
        } catch let error as RevocationError {
            #expect(error.category == answer.category, "\(error)")
            for text in answer.mentions { #expect(error.description.contains(text), "\(error)") }
            #expect(!error.description.contains("SECRET"), "no token in messages")
            #expect(error.target == "the portal \(Fakes.portal.absoluteString)")
        }
    }

    @Test(
        "RFC 7009 refusals and failures",
        arguments: [
            (400, #"{"error":"unsupported_token_type"}"#, ErrorCategory.refused),
            (503, #"{"error":"temporarily_unavailable"}"#, .unavailable),
            (401, #"{"error":"invalid_client","error_description":"unknown client"}"#, .refused),
        ])
    func rfc7009Answers(status: Int, body: String, category: ErrorCategory) async throws {
        let http = Fakes.HTTP(status: status, body: body)
        let revocation = TokenRevocation(
            style: .rfc7009, endpoint: Fakes.revokeURL, record: Fakes.record(.iap), target: "the IAP x")
        let error = await #expect(throws: RevocationError.self) {
            try await revocation.send(with: http, policy: RefreshPolicy(attempts: 1))
        }
        #expect(error?.category == category)
    }

    // MARK: - Retries, invalidation, newest token

    @Test("a transient failure is tried again; a refusal is not")
    func retries() async throws {
        let flaky = Fakes.HTTP { request, index in
            if index == 0 { throw Fakes.Unreachable() }
            if index == 1 { return Fakes.response(status: 502, body: "", contentType: "text/plain", url: request.url) }
            return Fakes.response(body: #"{"success":true}"#, url: request.url)
        }
        try await Fakes.portalCredential(http: flaky).revokeToken()
        #expect(flaky.requests.count == 3)

        let refusing = Fakes.HTTP(body: #"{"error":{"code":400,"message":"Unable to revoke token."}}"#)
        await #expect(throws: RevocationError.self) { try await Fakes.portalCredential(http: refusing).revokeToken() }
        #expect(refusing.requests.count == 1)

        let down = Fakes.HTTP { _, _ in throw Fakes.Unreachable() }
        let error = await #expect(throws: RevocationError.self) {
            try await Fakes.portalCredential(http: down).revokeToken()
        }
        #expect(down.requests.count == 3)
        #expect(error?.category == .unavailable)
        #expect(error?.description.contains("connection refused") == true)
    }

    @Test("after revokeToken, succeeded or not, the credential gives no token; revoking again retries")
    func invalidatedEitherWay() async throws {
        for body in [#"{"success":true}"#, #"{"error":{"code":400,"message":"no"}}"#] {
            let http = Fakes.HTTP(body: body)
            let credential = Fakes.portalCredential(http: http)
            _ = try? await credential.revokeToken()
            let error = await #expect(throws: CredentialError.self) { _ = try await credential.tokenInfo }
            #expect(error?.description.contains("signed out") == true)
            _ = try? await credential.revokeToken()
            #expect(http.requests.count == 2)
        }
    }

    @Test("a persisted credential revokes the newest refresh token in the store, not the one it loaded")
    func newestStoredToken() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.store()
        let http = Fakes.HTTP(body: #"{"success":true}"#)
        let store = try ArcGISCredentialStore.makePersistent(file: file, settings: Fakes.settings(http: http))
        try await store.addAndPersist(Fakes.portalCredential(http: http))
        let loaded = try ArcGISCredentialStore.makePersistent(file: file, settings: Fakes.settings(http: http))
        let credential = try #require(loaded.oauthUserCredentials(portalURL: Fakes.portal).first)

        // Another process exchanges the refresh token meanwhile.
        let key = OAuthUserCredential.storeKey(portalURL: Fakes.portal, clientID: "portal-client")
        let newer = Fakes.record(
            .oauthUser, refreshToken: "NEWER-REFRESH", updatedAt: Date(timeIntervalSince1970: 1_900_000_000))
        try await file.update { snapshot in
            if case .object(let entry) = newer.json { snapshot.set(entry, for: key) }
        }
        try await credential.revokeToken()
        #expect(Fakes.fields(of: try #require(http.requests.first))["auth_token"] == "NEWER-REFRESH")
    }
}
