import Foundation
import Logging
import Synchronization
import Testing
@testable import PortalAuth
import PortalAuthTesting
@testable import PortalAuthStore
@testable import PortalAuthTransport

@Suite("AuthenticationManager.data(for:) and challenges")
struct AuthenticatedRequestTests {
    typealias Fakes = ChallengeFakes

    static func manager(_ http: ScriptedHTTPClient) -> AuthenticationManager {
        AuthenticationManager(settings: SignOutFakes.settings(http: http))
    }

    @Test("499 without a credential: the handler's credential is stored and the request sent again with it")
    func tokenRequiredAnswered() async throws {
        let http = Fakes.portal(accepting: ["GOOD"])
        let manager = Self.manager(http)
        let credential = Fakes.pregenerated("GOOD", referer: "https://app.example.com")
        let handler = Fakes.ArcGISHandler { _, _ in .continueWithCredential(credential) }
        manager.arcGISAuthenticationChallengeHandler = handler

        let response = try await manager.data(for: .get(Fakes.portalSelf))
        #expect(String(decoding: response.body, as: UTF8.self).contains("alice"))
        #expect(handler.challenges.count == 1)
        #expect(handler.challenges.first?.kind == .oAuthOrToken)
        #expect(handler.challenges.first?.requestURL == Fakes.portalSelf)
        #expect(handler.challenges.first?.error.kind == .tokenRequired)
        #expect(http.requests.count == 2)
        #expect(http.requests[0].headers["X-Esri-Authorization"] == nil)
        #expect(http.requests[1].headers["X-Esri-Authorization"] == "Bearer GOOD")
        #expect(http.requests[1].headers["Referer"] == "https://app.example.com")
        #expect(manager.arcGISCredentialStore.credentials.first === credential)

        // The stored credential goes with the next request at once: no challenge.
        _ = try await manager.data(for: .get(Fakes.portalSelf))
        #expect(handler.challenges.count == 1)
        #expect(http.requests.count == 3)
    }

    @Test(
        "continueWithoutCredential fails with the challenge's error; cancel with ArcGISChallengeCancellationError; no handler as without credential"
    )
    func dispositions() async throws {
        let http = Fakes.portal(accepting: [])
        let manager = Self.manager(http)
        let without = try await #require(throws: AuthenticationChallengeError.self) {
            try await manager.data(for: .get(Fakes.portalSelf))
        }
        #expect(without.kind == .tokenRequired && !without.credentialWasRefused)
        #expect(without.category == .refused)

        let declining = Fakes.ArcGISHandler { _, _ in .continueWithoutCredential }
        manager.arcGISAuthenticationChallengeHandler = declining
        let error = try await #require(throws: AuthenticationChallengeError.self) {
            try await manager.data(for: .get(Fakes.portalSelf))
        }
        #expect(error == declining.challenges.first?.error)
        #expect(error.description.contains("requires an ArcGIS token"))
        #expect(error.description.contains("Token Required"))

        manager.arcGISAuthenticationChallengeHandler = Fakes.ArcGISHandler { _, _ in .cancel }
        await #expect(throws: ArcGISChallengeCancellationError.self) {
            try await manager.data(for: .get(Fakes.portalSelf))
        }

        struct Broken: Error {}
        manager.arcGISAuthenticationChallengeHandler = Fakes.ArcGISHandler { _, _ in throw Broken() }
        await #expect(throws: Broken.self) { try await manager.data(for: .get(Fakes.portalSelf)) }
        #expect(http.requests.count == 4, "one request each, no retry")
    }

    @Test(
        "a credential the server refuses after the handler's answer fails the request: the handler is asked once, no loop"
    )
    func retryOnce() async throws {
        let http = Fakes.portal(accepting: [])
        let manager = Self.manager(http)
        let handler = Fakes.ArcGISHandler { _, index in .continueWithCredential(Fakes.pregenerated("WRONG-\(index)")) }
        manager.arcGISAuthenticationChallengeHandler = handler
        let error = try await #require(throws: AuthenticationChallengeError.self) {
            try await manager.data(for: .get(Fakes.portalSelf))
        }
        #expect(error.kind == .invalidToken)
        #expect(error.credentialWasRefused)
        #expect(!error.description.contains("WRONG"))
        #expect(handler.challenges.count == 1)
        #expect(http.requests.count == 2)
    }

    @Test("498 with a renewable token: generated again once and retried before any handler is asked")
    func renewOn498() async throws {
        let clock = ManualClock()
        let tokens = Mutex(0)
        // Token service and portal in one: generateToken hands out T1, T2, …; the portal accepts only T2.
        let http = ScriptedHTTPClient(respond: { request, _ in
            if request.url.path.hasSuffix("/generateToken") {
                let n = tokens.withLock {
                    $0 += 1; return $0
                }
                return .json(TokenCredentialTests.tokenAnswer("T\(n)", clock: clock), for: request)
            }
            return Fakes.answer(
                Fakes.token(in: request) == "T2" ? #"{"ok":true}"# : Fakes.tokenEnvelope498, to: request)
        })
        let credential = try await TokenCredential.credential(
            for: Fakes.portal, username: "alice", password: "pw", tokenExpirationMinutes: nil,
            referer: TokenCredential.defaultReferer,
            httpClient: http, now: { clock.now })
        let manager = Self.manager(http)
        try await manager.arcGISCredentialStore.addAndPersist(credential)
        let handler = Fakes.ArcGISHandler { _, _ in .continueWithoutCredential }
        manager.arcGISAuthenticationChallengeHandler = handler

        let response = try await manager.data(for: .get(Fakes.portalSelf))
        #expect(response.statusCode == 200 && String(decoding: response.body, as: UTF8.self).contains("ok"))
        #expect(handler.challenges.isEmpty)
        #expect(http.requests.map(\.url.lastPathComponent) == ["generateToken", "self", "generateToken", "self"])
        #expect(http.requests[1].headers["Referer"] == TokenCredential.defaultReferer)
    }

    @Test("498 again after the renewal goes to the handler once, then fails")
    func renewThenAsk() async throws {
        let clock = ManualClock()
        let http = ScriptedHTTPClient(respond: { request, index in
            request.url.path.hasSuffix("/generateToken")
                ? .json(TokenCredentialTests.tokenAnswer("T\(index)", clock: clock), for: request)
                : Fakes.answer(Fakes.tokenEnvelope498, to: request)
        })
        let credential = try await TokenCredential.credential(
            for: Fakes.portal, username: "alice", password: "pw", tokenExpirationMinutes: nil, referer: "r",
            httpClient: http, now: { clock.now })
        let manager = Self.manager(http)
        try await manager.arcGISCredentialStore.addAndPersist(credential)
        let handler = Fakes.ArcGISHandler { _, _ in .continueWithCredential(Fakes.pregenerated("OTHER")) }
        manager.arcGISAuthenticationChallengeHandler = handler
        let error = try await #require(throws: AuthenticationChallengeError.self) {
            try await manager.data(for: .get(Fakes.portalSelf))
        }
        #expect(error.kind == .invalidToken)
        #expect(handler.challenges.count == 1)
        #expect(
            http.requests.map(\.url.lastPathComponent) == ["generateToken", "self", "generateToken", "self", "self"])
    }

    @Test("a pregenerated token that cannot be renewed goes to the handler on 498")
    func pregeneratedRefused() async throws {
        let http = Fakes.portal(accepting: ["NEW"])
        let manager = Self.manager(http)
        try await manager.arcGISCredentialStore.addAndPersist(Fakes.pregenerated("OLD"))
        let handler = Fakes.ArcGISHandler { _, _ in .continueWithCredential(Fakes.pregenerated("NEW")) }
        manager.arcGISAuthenticationChallengeHandler = handler
        #expect(try await manager.data(for: .get(Fakes.portalSelf)).statusCode == 200)
        #expect(handler.challenges.map(\.error.kind) == [.invalidToken])
        #expect(handler.challenges.first?.error.description.contains("pregenerated") == true)
        #expect(http.requests.compactMap(Fakes.token(in:)) == ["OLD", "NEW"])
    }

    @Test(
        "a stored credential that needs a new sign-in is left out, and the challenge goes to the handler, not back to it"
    )
    func deadCredentialAsksHandler() async throws {
        let http = Fakes.portal(accepting: ["NEW"])
        let manager = Self.manager(http)
        let expired = PregeneratedTokenCredential(
            url: Fakes.portal,
            tokenInfo: TokenInfo(
                accessToken: "EXPIRED", expirationDate: Date().addingTimeInterval(-60), isSSLRequired: false)!)
        try await manager.arcGISCredentialStore.addAndPersist(expired)
        let handler = Fakes.ArcGISHandler { _, _ in .continueWithCredential(Fakes.pregenerated("NEW")) }
        manager.arcGISAuthenticationChallengeHandler = handler
        #expect(try await manager.data(for: .get(Fakes.portalSelf)).statusCode == 200)
        #expect(handler.challenges.map(\.error.kind) == [.tokenRequired])
        #expect(handler.challenges.first?.error.description.contains("expired") == true)
        #expect(http.requests.map { Fakes.token(in: $0) } == [nil, "NEW"])
        #expect(manager.arcGISCredentialStore.credentials.count == 1, "the new credential replaced the expired one")
        _ = try await manager.data(for: .get(Fakes.portalSelf))
        #expect(handler.challenges.count == 1)
    }

    @Test("a token that requires SSL is never sent over http")
    func sslRequired() async throws {
        let http = Fakes.portal(accepting: ["S"])
        let manager = Self.manager(http)
        let url = URL(string: "http://127.0.0.1:8080/portal/sharing/rest/portals/self")!
        try await manager.arcGISCredentialStore.addAndPersist(
            Fakes.pregenerated("S", ssl: true, url: URL(string: "http://127.0.0.1:8080/portal")!))
        let error = try await #require(throws: CredentialError.self) { try await manager.data(for: .get(url)) }
        #expect(error.description.contains("only be sent over HTTPS"))
        #expect(!error.description.contains("\"S\""))
        #expect(http.requests.isEmpty)
    }

    @Test(
        "tokens go as token= in a GET query or a form body when placement is .parameter; a caller's own token is kept")
    func placement() async throws {
        let http = Fakes.portal(accepting: ["P"])
        let manager = Self.manager(http)
        manager.arcGISTokenPlacement = .parameter
        try await manager.arcGISCredentialStore.addAndPersist(Fakes.pregenerated("P"))
        _ = try await manager.data(for: .get(Fakes.portalSelf))
        _ = try await manager.data(for: .form(Fakes.portalSelf, fields: [("f", "json")]))
        #expect(http.requests[0].url.query == "f=json&token=P")
        #expect(http.requests[1].formField("token") == "P" && http.requests[1].formField("f") == "json")
        #expect(http.requests.allSatisfy { $0.headers["X-Esri-Authorization"] == nil })

        var own = TransportRequest.get(Fakes.portalSelf)
        own.headers.add(name: "X-Esri-Authorization", value: "Bearer MINE")
        _ = try? await manager.data(for: own)
        #expect(http.requests[2].headers.values(for: "X-Esri-Authorization") == ["Bearer MINE"])
        #expect(http.requests[2].url.query == "f=json")
    }

    @Test("concurrent requests challenged at once ask the handler once; the others use the stored credential")
    func oneChallengeAtATime() async throws {
        let http = Fakes.portal(accepting: ["GOOD"])
        let manager = Self.manager(http)
        let handler = Fakes.ArcGISHandler(delay: .milliseconds(100)) { _, _ in
            .continueWithCredential(Fakes.pregenerated("GOOD"))
        }
        manager.arcGISAuthenticationChallengeHandler = handler
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<4 { group.addTask { try await manager.data(for: .get(Fakes.portalSelf)).statusCode } }
            for try await status in group { #expect(status == 200) }
        }
        #expect(handler.challenges.count == 1)
    }

    // MARK: - IAP

    @Test(
        "IAP: the stored access token (when chosen) goes as Authorization: Bearer; a 401 refreshes it once and retries")
    func iapRefresh() async throws {
        let url = URL(string: "https://maps.example.com/portal/home")!
        let http = ScriptedHTTPClient(respond: { request, _ in
            if request.url.host == "idp.example.com" {
                return try ScriptedHTTPClient.tokens("FRESH", refresh: "R2").get()
            }
            let ok = request.headers["Authorization"] == "Bearer FRESH"
            return Fakes.answer(
                ok ? "{}" : "", status: ok ? 200 : 401,
                headers: ok ? [] : [("WWW-Authenticate", "Bearer realm=\"iap\"")], to: request)
        })
        // The stored token is two minutes old: old enough to be refreshed once when refused.
        var settings = SignOutFakes.settings(http: http)
        settings.clock = ManualClock(start: Date(timeIntervalSince1970: 1_800_000_120))
        let manager = AuthenticationManager(settings: settings)
        let credential = SignOutFakes.iapCredential(http: http)
        credential.tokenSentToProxy = .accessToken
        try await manager.arcGISCredentialStore.addAndPersist(credential)
        let handler = Fakes.ArcGISHandler { _, _ in .continueWithoutCredential }
        manager.arcGISAuthenticationChallengeHandler = handler
        #expect(try await manager.data(for: .get(url)).statusCode == 200)
        #expect(handler.challenges.isEmpty)
        #expect(http.requests.map { $0.url.host ?? "" } == ["maps.example.com", "idp.example.com", "maps.example.com"])
        #expect(http.requests[0].headers["Authorization"] == "Bearer ACCESS-SECRET")
    }

    @Test("IAP: a redirect to the identity provider of a registered configuration is a challenge for the IAP sign-in")
    func iapRedirect() async throws {
        let url = URL(string: "https://maps.example.com/portal/home")!
        let http = ScriptedHTTPClient(respond: { request, _ in
            if request.headers["Authorization"] == "Bearer ACCESS-SECRET" { return Fakes.answer("{}", to: request) }
            return Fakes.answer(
                "", status: 302,
                headers: [("Location", "https://login.example.com/tenant/oauth2/authorize?client_id=x")], to: request)
        })
        let manager = Self.manager(http)
        let authenticator = Authenticator(signInSettings: nil)
        authenticator.iapConfigurations = [ChallengeDetectionTests.iap]
        manager.handleChallenges(using: authenticator)
        // The authenticator may not sign in (no settings): the challenge fails with its error.
        let error = try await #require(throws: AuthenticationChallengeError.self) {
            try await manager.data(for: .get(url))
        }
        #expect(error.kind == .identityAwareProxy)
        #expect(error.description.contains("login.example.com"))

        let handler = Fakes.ArcGISHandler { challenge, _ in
            #expect(challenge.kind == .iap)
            let credential = SignOutFakes.iapCredential(http: http)
            credential.tokenSentToProxy = .accessToken
            return .continueWithCredential(credential)
        }
        manager.arcGISAuthenticationChallengeHandler = handler
        // Without the authenticator, and with no configuration registered, a redirect to another host that is not an
        // authorization request (no response_type) is no challenge: a plain 302 answer.
        #expect(try await manager.data(for: .get(url)).statusCode == 302)
        #expect(handler.challenges.isEmpty)
        // An SDK-style handler declares nothing: the app registers the configuration with the manager.
        manager.iapConfigurations = [ChallengeDetectionTests.iap]
        #expect(try await manager.data(for: .get(url)).statusCode == 200)
        #expect(handler.challenges.map(\.kind) == [.iap])
    }

    @Test(
        "IAP: a proxy-looking answer while no IAP configuration is known logs a notice naming iapConfigurations; an ordinary answer logs nothing (issue 45)"
    )
    func unknownProxyNotice() async throws {
        let url = URL(string: "https://maps.example.com/portal/home")!
        let http = ScriptedHTTPClient(respond: { request, _ in Fakes.answer("", status: 401, to: request) })
        let lines = LogLines()
        var settings = SignOutFakes.settings(http: http)
        settings.logger = Logger(label: "test") { _ in CapturingLogHandler(storage: lines) }
        let manager = AuthenticationManager(settings: settings)
        let handler = Fakes.ArcGISHandler { _, _ in .continueWithCredential(SignOutFakes.iapCredential(http: http)) }
        manager.arcGISAuthenticationChallengeHandler = handler
        #expect(try await manager.data(for: .get(url)).statusCode == 401)
        #expect(handler.challenges.isEmpty)
        #expect(lines.text.contains("no IAP configuration is known"), "\(lines.text)")
        #expect(lines.text.contains("AuthenticationManager.iapConfigurations"))
        #expect(lines.text.contains("HTTP 401 without a WWW-Authenticate challenge"))

        // An ordinary answer says nothing.
        let quiet = LogLines()
        settings.logger = Logger(label: "test") { _ in CapturingLogHandler(storage: quiet) }
        let ordinary = AuthenticationManager(
            settings: {
                var ordinarySettings = settings
                ordinarySettings.httpClient = ScriptedHTTPClient(respond: { request, _ in
                    Fakes.answer("{}", to: request)
                })
                return ordinarySettings
            }())
        #expect(try await ordinary.data(for: .get(url)).statusCode == 200)
        #expect(!quiet.text.contains("no IAP configuration is known"))
    }

    // MARK: - HTTP authentication

    @Test("Basic: the network handler's password is stored for the host and port, and the retry carries it")
    func basic() async throws {
        let url = URL(string: "https://web.example.com/arcgis/rest/info")!
        let http = ScriptedHTTPClient(respond: { request, _ in
            request.credentials.password?.password == "secret"
                ? Fakes.answer("{}", to: request)
                : Fakes.answer(
                    "", status: 401,
                    headers: [("WWW-Authenticate", "Negotiate"), ("WWW-Authenticate", #"Basic realm="GIS""#)],
                    to: request)
        })
        let manager = Self.manager(http)
        let handler = Fakes.NetworkHandler { challenge, _ in
            challenge.kind == .negotiate
                ? .rejectProtectionSpace : .continueWithCredential(.password(username: "alice", password: "secret"))
        }
        manager.networkAuthenticationChallengeHandler = handler
        #expect(try await manager.data(for: .get(url)).statusCode == 200)
        #expect(handler.challenges.map(\.kind) == [.negotiate, .basic])
        #expect(handler.challenges.last?.realm == "GIS")
        #expect(handler.challenges.last?.protectionSpace == ProtectionSpace(host: "web.example.com", port: 443))
        #expect(
            await manager.networkCredentialStore.credentials(for: ProtectionSpace(host: "web.example.com", port: 443))
                .first?.username == "alice")
        #expect(http.requests.count == 2)
    }

    @Test("Basic: a refused password is asked for once again, then the request fails without looping")
    func basicRefused() async throws {
        let url = URL(string: "https://web.example.com/x")!
        let http = ScriptedHTTPClient(respond: { request, _ in
            Fakes.answer("", status: 401, headers: [("WWW-Authenticate", #"Digest realm="r", nonce="n""#)], to: request)
        })
        let manager = Self.manager(http)
        let handler = Fakes.NetworkHandler { _, _ in
            .continueWithCredential(.password(username: "alice", password: "wrong"))
        }
        manager.networkAuthenticationChallengeHandler = handler
        let error = try await #require(throws: AuthenticationChallengeError.self) {
            try await manager.data(for: .get(url))
        }
        #expect(error.kind == .httpAuthentication && error.credentialWasRefused)
        #expect(!error.description.contains("wrong"))
        #expect(handler.challenges.count == 1)
        #expect(http.requests.count == 2)

        // The stored (wrong) password goes first next time; the handler is asked once more.
        _ = try? await manager.data(for: .get(url))
        #expect(handler.challenges.count == 2)
        #expect(http.requests.count == 4)
    }

    @Test(
        "network dispositions: continueWithoutCredential fails with the challenge's error, cancel with ArcGISChallengeCancellationError"
    )
    func networkDispositions() async throws {
        let url = URL(string: "https://web.example.com/x")!
        let http = ScriptedHTTPClient(respond: { request, _ in
            Fakes.answer("", status: 401, headers: [("WWW-Authenticate", "Basic")], to: request)
        })
        let manager = Self.manager(http)
        let declining = Fakes.NetworkHandler { _, _ in .continueWithoutCredential }
        manager.networkAuthenticationChallengeHandler = declining
        let error = try await #require(throws: AuthenticationChallengeError.self) {
            try await manager.data(for: .get(url))
        }
        #expect(error.kind == .httpAuthentication && !error.credentialWasRefused)
        manager.networkAuthenticationChallengeHandler = Fakes.NetworkHandler { _, _ in .cancel }
        await #expect(throws: ArcGISChallengeCancellationError.self) { try await manager.data(for: .get(url)) }
        manager.networkAuthenticationChallengeHandler = Fakes.NetworkHandler { _, _ in .rejectProtectionSpace }
        await #expect(throws: AuthenticationChallengeError.self) { try await manager.data(for: .get(url)) }
        #expect(http.requests.count == 3)
    }

    @Test("clearCredentialStores empties the network store too")
    func clearNetwork() async throws {
        let manager = AuthenticationManager()
        let space = ProtectionSpace(host: "h", port: 443)
        try await manager.networkCredentialStore.add(.password(username: "u", password: "p"), for: space)
        await manager.clearCredentialStores()
        #expect(await manager.networkCredentialStore.protectionSpaces.isEmpty)
    }
}
