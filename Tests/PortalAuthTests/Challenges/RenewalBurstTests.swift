import Foundation
import Synchronization
import Testing
@testable import PortalAuth
import PortalAuthTesting
@testable import PortalAuthTransport

/// One renewal per expiry: however many requests in flight see the old token refused at once, the token is asked
/// for once (issue 27), for every kind that can be renewed, within one process and across processes.
@Suite("One renewal per expiry, however many requests saw the old token refused")
struct RenewalBurstTests {
    typealias Fakes = ChallengeFakes

    /// The kinds of credential that renew themselves.
    enum Kind: String, CaseIterable, Sendable, CustomStringConvertible {
        case token, application, oauthUser, iap
        var description: String { rawValue }
    }

    /// A portal (or a service behind an IAP) and its token endpoint in one: it accepts only the newest token it
    /// issued, counts the token requests, and holds the first `wave` refused requests until all of them have
    /// arrived, so that they all carry the old token and are refused together.
    final class Server: TransportClient {
        private struct State {
            var accepted: String
            var issued = 0
            var held: [CheckedContinuation<Void, Never>] = []
            var refused = 0
        }

        let kind: Kind
        let clock: ManualClock
        let wave: Int
        private let state: Mutex<State>

        init(kind: Kind, accepting token: String, clock: ManualClock, wave: Int) {
            self.kind = kind
            self.clock = clock
            self.wave = wave
            state = Mutex(State(accepted: token))
        }

        /// Token requests answered so far.
        var tokenRequests: Int { state.withLock { $0.issued } }

        /// The server stops accepting the token it accepts now (it expired on the server's side).
        func expireToken() { state.withLock { $0.accepted = "" } }

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            let path = request.url.path
            if path.hasSuffix("/generateToken") || path.hasSuffix("/oauth2/token") {
                let token = state.withLock { state in
                    state.issued += 1
                    state.accepted = "NEW-\(state.issued)"
                    return state.accepted
                }
                await Task.yield()  // a token endpoint takes a moment: other refused requests arrive meanwhile
                return tokenAnswer(token, to: request)
            }
            let sent =
                kind == .iap
                ? request.headers["Authorization"].map { String($0.dropFirst("Bearer ".count)) }
                : Fakes.token(in: request)
            let accepted = state.withLock { $0.accepted == sent }
            if accepted { return Fakes.answer(#"{"ok":true}"#, to: request) }
            await holdUntilTheWaveHasArrived()
            if kind == .iap {
                return Fakes.answer(
                    "", status: 401, headers: [("WWW-Authenticate", "Bearer realm=\"iap\"")], to: request)
            }
            return Fakes.answer(Fakes.tokenEnvelope498, to: request)
        }

        private func holdUntilTheWaveHasArrived() async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let release: [CheckedContinuation<Void, Never>] = state.withLock { state in
                    state.refused += 1
                    guard state.refused <= wave else { return [continuation] }
                    state.held.append(continuation)
                    guard state.refused == wave else { return [] }
                    defer { state.held.removeAll() }
                    return state.held
                }
                for held in release { held.resume() }
            }
        }

        private func tokenAnswer(_ token: String, to request: TransportRequest) -> TransportResponse {
            switch kind {
            case .token:
                return .json(TokenCredentialTests.tokenAnswer(token, clock: clock), for: request)
            case .application, .oauthUser, .iap:
                let refresh = kind == .application ? "" : #","refresh_token":"R-\#(token)""#
                return .json(
                    #"{"access_token":"\#(token)","expires_in":3600,"token_type":"Bearer"\#(refresh)}"#, for: request)
            }
        }
    }

    /// A manager holding a credential of `kind` whose token `server` accepts, and the URL of a resource it covers.
    static func manager(_ kind: Kind, server: Server, clock: ManualClock) async throws -> (AuthenticationManager, URL) {
        let settings = SignInSettings(
            browser: nil, timeout: .seconds(10), observer: SilentSignInObserver(), httpClient: server,
            refreshPolicy: RefreshPolicy(attempts: 3, initialBackoff: .milliseconds(1)))
        let manager = AuthenticationManager(settings: settings)
        let credential: ArcGISCredential
        var url = Fakes.portalSelf
        switch kind {
        case .token:
            credential = try await TokenCredential.credential(
                for: Fakes.portal, username: "alice", password: "pw", tokenExpirationMinutes: nil, referer: "r",
                httpClient: server,
                now: { clock.now })
        case .application:
            credential = try await OAuthApplicationCredential.credential(
                for: Fakes.portal, clientID: "app-id", clientSecret: "app-secret", tokenExpirationMinutes: nil,
                httpClient: server,
                now: { clock.now })
        case .oauthUser:
            credential = OAuthUserCredential(
                record: SignOutFakes.record(.oauthUser, accessToken: "NEW-0"), persistence: nil, settings: settings)
            url = URL(string: "https://portal.example.com/portal/sharing/rest/portals/self?f=json")!
        case .iap:
            // Tokens an hour old (a refused token younger than a minute is not renewed: the proxy refuses its kind),
            // and the access token sent, which the fake proxy checks and the fake token endpoint renews.
            let iap = IAPCredential(
                record: SignOutFakes.record(.iap, accessToken: "NEW-0", updatedAt: Date().addingTimeInterval(-3600)),
                persistence: nil,
                settings: settings)
            iap.tokenSentToProxy = .accessToken
            credential = iap
            url = URL(string: "https://maps.example.com/portal/home")!
        }
        try await manager.arcGISCredentialStore.addAndPersist(credential)
        manager.arcGISAuthenticationChallengeHandler = Fakes.ArcGISHandler { _, _ in .continueWithoutCredential }
        return (manager, url)
    }

    /// Sends `count` requests to `url` with at most `concurrency` in flight; the statuses, in no order.
    static func burst(_ manager: AuthenticationManager, _ url: URL, count: Int, concurrency: Int) async throws -> [Int]
    {
        try await withThrowingTaskGroup(of: Int.self) { group in
            var statuses: [Int] = []
            for index in 0..<count {
                if index >= concurrency, let status = try await group.next() { statuses.append(status) }
                group.addTask { try await manager.data(for: .get(url)).statusCode }
            }
            for try await status in group { statuses.append(status) }
            return statuses
        }
    }

    @Test(
        "200 requests at concurrency 64, the first 64 refused together: one token request, no failure",
        arguments: Kind.allCases)
    func oneRenewalPerBurst(kind: Kind) async throws {
        let clock = ManualClock()
        let server = Server(kind: kind, accepting: "", clock: clock, wave: 64)
        let (manager, url) = try await Self.manager(kind, server: server, clock: clock)
        // The credential's first token (generated for the token and application kinds) is the one the server takes.
        let initial = try await Self.currentToken(of: manager)
        server.expireToken()
        let before = server.tokenRequests
        #expect(!initial.isEmpty)

        let statuses = try await Self.burst(manager, url, count: 200, concurrency: 64)
        #expect(statuses.count == 200)
        #expect(statuses.allSatisfy { $0 == 200 }, "every request succeeds after the renewal")
        #expect(server.tokenRequests - before == 1, "one token request for the whole burst")
    }

    /// The token the manager's credential sends now.
    static func currentToken(of manager: AuthenticationManager) async throws -> String {
        let credential = try #require(manager.arcGISCredentialStore.credentials.first)
        if let iap = credential.kind.iap { return try await iap.tokenInfo.accessToken }
        return try await #require(credential.kind.arcGISTokenSource).validTokenInfo(renew: false).accessToken
    }

    @Test(
        "a refusal that arrives after the renewal finished uses the new token and asks for none",
        arguments: [Kind.token, .oauthUser])
    func lateRefusal(kind: Kind) async throws {
        let clock = ManualClock()
        let server = Server(kind: kind, accepting: "", clock: clock, wave: 1)
        let (manager, _) = try await Self.manager(kind, server: server, clock: clock)
        let source = try #require(manager.arcGISCredentialStore.credentials.first?.kind.arcGISTokenSource)
        let old = try await source.validTokenInfo(renew: false).accessToken
        let before = server.tokenRequests
        let renewed = try await source.renewedTokenInfo(refused: old).accessToken
        #expect(renewed != old)
        // A second request refused for the same old token, answered after the renewal ended.
        #expect(try await source.renewedTokenInfo(refused: old).accessToken == renewed)
        #expect(server.tokenRequests - before == 1)
        // The new token refused in turn is renewed again: one renewal per expiry, not one ever.
        #expect(try await source.renewedTokenInfo(refused: renewed).accessToken != renewed)
        #expect(server.tokenRequests - before == 2)
    }

    @Test("across processes: a keeper that finds the refused token already replaced in the store sends nothing")
    func acrossProcesses() async throws {
        let record = SignOutFakes.record(.oauthUser, accessToken: "OLD")
        let (temporary, store) = try await TokenKeeperTests.seeded(with: record)
        defer { withExtendedLifetime(temporary) {} }
        let first = ScriptedHTTPClient([ScriptedHTTPClient.tokens("access-2", refresh: "refresh-2")])
        let second = ScriptedHTTPClient([ScriptedHTTPClient.tokens("access-X", refresh: "refresh-X")])
        // Two processes loaded the same sign-in; a server refused "OLD" to both.
        let processA = TokenKeeperTests.persisted(record, in: store, first)
        let processB = TokenKeeperTests.persisted(record, in: store, second)
        #expect(try await processA.validCredential(force: true, refused: "OLD").accessToken == "access-2")
        // B's 498 comes a while later (its clock is ahead): A's refresh is no longer "just now", only the refused
        // token tells that it was replaced.
        let seenByB = try await processB.validCredential(
            force: true, refused: "OLD", now: { Date().addingTimeInterval(30) })
        #expect(seenByB.accessToken == "access-2")
        #expect(first.count == 1 && second.count == 0)
        // Without the refused token named, a forced refresh still refreshes (`portal-auth refresh`).
        let forced = try await processB.validCredential(force: true)
        #expect(forced.accessToken == "access-X")
        #expect(second.count == 1)
    }
}
