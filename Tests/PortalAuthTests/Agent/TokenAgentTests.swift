import Foundation
import Glibc
import PortalAuthTesting
import Synchronization
import Testing

@testable import PortalAuth
@testable import PortalAuthCore

/// `TokenAgent` and `AuthenticationManager.tokenAgent` against the real `AgentServer` on a temporary socket, with a
/// handler that answers as an agent would: the token goes where a stored credential's would, a URL the agent holds
/// nothing for goes without one, an agent not running is an error that names only public API.
@Suite("Token agent: the library's tokens from a portal-auth agent", .timeLimit(.minutes(2)))
struct TokenAgentTests {
    static let portal = URL(string: "https://gis.example.com/portal")!
    static let resource = URL(string: "https://gis.example.com/portal/sharing/rest/portals/self?f=json")!

    static func token(_ value: String, kind: CredentialKind = .oauthUser, isIDToken: Bool = false) -> AgentToken {
        AgentToken(
            kind: kind, target: "the portal https://gis.example.com/portal", url: portal, username: "alice",
            clientID: "app1", configurationFile: nil, value: value, type: "Bearer",
            expirationDate: Date(timeIntervalSince1970: 4_000_000_000), idToken: nil, idTokenExpirationDate: nil,
            isIDToken: isIDToken)
    }

    /// An agent whose handler answers `answer` to token requests and records them.
    final class FakeAgent {
        let running: AgentServerTests.Running
        final class Asked: Sendable {
            let list = Mutex<[AgentTokenRequest]>([])
            func withLock<T>(_ body: (inout [AgentTokenRequest]) -> T) -> T { list.withLock { body(&$0) } }
        }
        let asked = Asked()

        init(_ answer: @escaping @Sendable (AgentTokenRequest) -> AgentAnswer) throws {
            let asked = self.asked
            running = try AgentServerTests.Running(handler: { request, _ in
                guard case .token(let request) = request else { return .failure(.badRequest("?")) }
                asked.withLock { $0.append(request) }
                return answer(request)
            })
        }

        var agent: TokenAgent { TokenAgent(socketPath: running.path, timeout: .seconds(20)) }
    }

    @Test("token(for:) asks for the URL's token for hosts, with the minimum validity and the proxy-token choice")
    func asksForTheURL() async throws {
        let fake = try FakeAgent { _ in .token(Self.token("agent-token-1")) }
        var agent = fake.agent
        agent.proxyToken = .accessToken
        let token = try await agent.token(for: Self.resource, minimumValidity: .seconds(120))
        await fake.running.stop()
        #expect(token.value == "agent-token-1")
        #expect(!token.isForProxy)
        #expect(token.username == "alice")
        #expect(!"\(token)".contains("agent-token-1"), "the description shows no token")
        let asked = fake.asked.withLock { $0 }
        #expect(
            asked == [
                AgentTokenRequest(
                    selection: .url(Self.resource), minValid: 120, proxyToken: .accessToken, forHosts: true)
            ])
    }

    @Test("data(for:) sends the agent's ArcGIS token as X-Esri-Authorization, and an IAP token as Authorization")
    func managerSendsTheAgentsToken() async throws {
        for (kind, header) in [(CredentialKind.oauthUser, "X-Esri-Authorization"), (.iap, "Authorization")] {
            let fake = try FakeAgent { _ in .token(Self.token("agent-token-2", kind: kind)) }
            let client = ScriptedHTTPClient(body: #"{"ok": true}"#)
            let manager = AuthenticationManager(settings: SignInSettings(httpClient: client))
            manager.tokenAgent = fake.agent
            let response = try await manager.data(for: .get(Self.resource))
            await fake.running.stop()
            #expect(response.statusCode == 200)
            #expect(client.requests.first?.headers[header] == "Bearer agent-token-2", "\(kind)")
            // The refresh margin of the manager's settings (5 minutes by default) is what the token must have left.
            #expect(fake.asked.withLock { $0.first?.minValid } == 300)
        }
    }

    @Test(
        "an agent token refused with 498: asked again once for more validity than it had left (the agent refreshes), and sent"
    )
    func refusedTokenRenewedThroughTheAgent() async throws {
        let expiry = Date().addingTimeInterval(3600)
        let fake = try FakeAgent { request in
            var token = Self.token(request.minValid > 3000 ? "agent-token-new" : "agent-token-old")
            token.expirationDate = expiry
            return .token(token)
        }
        let client = ScriptedHTTPClient(respond: { request, _ in
            let refused = request.headers["X-Esri-Authorization"] == "Bearer agent-token-old"
            let body = refused ? #"{"error": {"code": 498, "message": "Invalid token", "details": []}}"# : "{}"
            return TransportResponse(
                statusCode: 200, headers: [("Content-Type", "application/json")], body: Data(body.utf8),
                url: request.url)
        })
        let manager = AuthenticationManager(settings: SignInSettings(httpClient: client))
        manager.tokenAgent = fake.agent
        let response = try await manager.data(for: .get(Self.resource))
        await fake.running.stop()
        #expect(response.body == Data("{}".utf8))
        #expect(
            client.requests.map { $0.headers["X-Esri-Authorization"] } == [
                "Bearer agent-token-old", "Bearer agent-token-new",
            ])
        let asked = fake.asked.withLock { $0.map(\.minValid) }
        #expect(asked.count == 2 && asked[0] == 300, "\(asked)")
        #expect(asked.count == 2 && (3000...3602).contains(asked[1]), "more than the refused token had left: \(asked)")
    }

    @Test(
        "an agent's IAP token a proxy refuses (401 or 403): asked again once for more validity when it was issued a minute ago or more (the manager's clock), refused at once when younger or of unknown age"
    )
    func refusedProxyTokenRenewedWhenOld() async throws {
        let clock = ManualClock()
        let expiry = clock.now.addingTimeInterval(3600)
        let cases: [(age: TimeInterval?, status: Int, renewed: Bool)] = [
            (60, 401, true), (3000, 403, true), (59, 401, false), (nil, 401, false),
        ]
        for (age, status, renewed) in cases {
            let fake = try FakeAgent { request in
                var token = Self.token(
                    request.minValid > 300 ? "proxy-token-new" : "proxy-token-old", kind: .iap, isIDToken: true)
                token.expirationDate = expiry
                token.issuedAt = age.map { clock.now.addingTimeInterval(-$0) }
                return .token(token)
            }
            let client = ScriptedHTTPClient(respond: { request, _ in
                let refused = request.headers["Authorization"] == "Bearer proxy-token-old"
                return TransportResponse(
                    statusCode: refused ? status : 200, headers: [("Content-Type", "application/json")],
                    body: Data("{}".utf8), url: request.url)
            })
            let manager = AuthenticationManager(settings: SignInSettings(httpClient: client, clock: clock))
            manager.tokenAgent = fake.agent
            let url = URL(string: "https://maps.example.com/portal/home")!
            let label = "age \(age.map { "\($0)" } ?? "unknown"), HTTP \(status)"
            do {
                let response = try await manager.data(for: .get(url))
                #expect(renewed, "\(label): no error")
                #expect(response.statusCode == 200, "\(label)")
            } catch let error as AuthenticationChallengeError {
                #expect(!renewed, "\(label): \(error)")
                #expect(error.kind == .iapTokenRefused, "\(label)")
            }
            await fake.running.stop()
            let sent = client.requests.map { $0.headers["Authorization"] }
            let asked = fake.asked.withLock { $0.map(\.minValid) }
            if renewed {
                #expect(sent == ["Bearer proxy-token-old", "Bearer proxy-token-new"], "\(label)")
                // One second beyond what the refused token had left: the agent refreshes while it is still current.
                #expect(asked == [300, 3601], "\(label)")
            } else {
                #expect(sent == ["Bearer proxy-token-old"], "\(label)")
                #expect(asked == [300], "\(label): not asked again")
            }
        }
    }

    @Test("issued_at_unix: sent when known, read back; an answer without it (an older agent) reads as nil")
    func issueDateOnTheWire() throws {
        var token = Self.token("agent-token-5", kind: .iap)
        token.issuedAt = Date(timeIntervalSince1970: 1_800_000_000)
        let line = AgentAnswer.token(token).line
        #expect(try JSONValue.parse(line)["token"]?["issued_at_unix"]?.integerValue == 1_800_000_000, "\(line)")
        guard case .token(let read)? = AgentAnswer.parse(line) else {
            Issue.record("not read back: \(line)")
            return
        }
        #expect(read == token)
        #expect(TokenAgent.Token(read).issueDate == token.issuedAt)
        token.issuedAt = nil
        let older = AgentAnswer.token(token).line
        #expect(!older.contains("issued_at"), "\(older)")
        guard case .token(let readOlder)? = AgentAnswer.parse(older) else {
            Issue.record("not read back: \(older)")
            return
        }
        #expect(readOlder.issuedAt == nil)
    }

    @Test("a credential of the manager's store covers the URL: the agent is not asked")
    func storeFirst() async throws {
        let fake = try FakeAgent { _ in .token(Self.token("agent-token-3")) }
        let client = ScriptedHTTPClient(body: #"{"ok": true}"#)
        let manager = AuthenticationManager(settings: SignInSettings(httpClient: client))
        manager.tokenAgent = fake.agent
        let info = try #require(
            TokenInfo(accessToken: "own-token", expirationDate: Date().addingTimeInterval(3600), isSSLRequired: true))
        manager.arcGISCredentialStore.add(PregeneratedTokenCredential(url: Self.portal, tokenInfo: info))
        _ = try await manager.data(for: .get(Self.resource))
        await fake.running.stop()
        #expect(client.requests.first?.headers["X-Esri-Authorization"] == "Bearer own-token")
        #expect(fake.asked.withLock { $0.isEmpty })
    }

    @Test("nothing stored in the agent: the request goes without a token and the server's challenge is the error")
    func nothingStoredGoesWithout() async throws {
        let fake = try FakeAgent { request in
            guard case .url(let url) = request.selection else { return .failure(.badRequest("?")) }
            return .failure(
                AgentFailure(
                    .signInNeeded, AgentTokenRequest.nothingStoredPrefix + url.absoluteString + ". Sign in first."))
        }
        let client = ScriptedHTTPClient(
            body: #"{"error": {"code": 499, "message": "Token Required", "details": []}}"#)
        let manager = AuthenticationManager(settings: SignInSettings(httpClient: client))
        manager.tokenAgent = fake.agent
        await #expect(throws: AuthenticationChallengeError.self) {
            _ = try await manager.data(for: .get(Self.resource))
        }
        #expect(client.requests.first?.headers["X-Esri-Authorization"] == nil)
        do {
            _ = try await fake.agent.token(for: Self.resource)
            Issue.record("no error")
        } catch let error as TokenAgentError {
            #expect(error.requiresSignIn && error.isNothingStored)
        }
        await fake.running.stop()
    }

    @Test("no agent running: TokenAgentError, .unavailable, naming the socket and public API only")
    func notRunning() async throws {
        let folder = try TemporaryDirectory()
        let agent = TokenAgent(socketPath: "\(folder.path)/none.sock")
        let manager = AuthenticationManager(settings: SignInSettings(httpClient: ScriptedHTTPClient(body: "{}")))
        manager.tokenAgent = agent
        do {
            _ = try await manager.data(for: .get(Self.resource))
            Issue.record("no error")
        } catch let error as TokenAgentError {
            #expect(error.category == .unavailable)
            #expect(!error.requiresSignIn)
            #expect(error.socketPath == agent.socketPath)
            #expect(error.description.contains("none.sock"), "\(error)")
            #expect(error.description.contains("TokenAgent"), "\(error)")
            #expect(!error.description.contains("portal-auth agent"), "no command of the tool: \(error)")
        }
    }

    @Test("an agent token over plain http to another host is refused; a proxy refusing it is iapTokenRefused at once")
    func insecureAndRefused() async throws {
        let fake = try FakeAgent { _ in .token(Self.token("agent-token-4", kind: .iap, isIDToken: true)) }
        let manager = AuthenticationManager(
            settings: SignInSettings(httpClient: ScriptedHTTPClient(status: 401, body: "")))
        manager.tokenAgent = fake.agent
        await #expect(throws: CredentialError.self) {
            _ = try await manager.data(for: .get(URL(string: "http://maps.example.com/portal/home")!))
        }
        do {
            _ = try await manager.data(for: .get(URL(string: "https://maps.example.com/portal/home")!))
            Issue.record("no error")
        } catch let error as AuthenticationChallengeError {
            #expect(error.kind == .iapTokenRefused)
            #expect(error.refusedIAPToken == .idToken)
        }
        await fake.running.stop()
        #expect(fake.asked.withLock { $0.count } == 2, "asked once per request: no refresh asked for")
    }
}

/// The agent's in-memory tokens: given while the store's files are unchanged and the token is valid for the
/// request's `min_valid`; any write of the store (an atomic replace) or a validity too short reads the store again.
@Suite("Agent token cache")
struct AgentTokenCacheTests {
    static let request = AgentTokenRequest(selection: .name("work"), minValid: 300)

    static func token(expiring at: Date) -> AgentToken {
        AgentToken(
            kind: .oauthUser, target: "the portal https://gis.example.com/portal",
            url: URL(string: "https://gis.example.com/portal")!, username: "alice", clientID: "app1",
            configurationFile: nil, value: "cached-token", type: "Bearer", expirationDate: at, idToken: nil,
            idTokenExpirationDate: nil, isIDToken: false)
    }

    /// Replaces `path` the way the store is written: a new file renamed over it.
    static func replace(_ path: String, with text: String) throws {
        let temporary = path + ".tmp"
        try Data(text.utf8).write(to: URL(fileURLWithPath: temporary))
        #expect(rename(temporary, path) == 0)
    }

    @Test("kept while the files are unchanged and the token has min_valid left; whatever min_valid, one entry")
    func keptWhileUnchanged() throws {
        let folder = try TemporaryDirectory()
        let store = "\(folder.path)/credentials.json"
        try Self.replace(store, with: "{}")
        let now = Date(timeIntervalSince1970: 1_000_000)
        let cache = AgentTokenCache()
        let marker = AgentTokenCache.Marker.of([store, "\(folder.path)/preferences.json"])
        cache.keep(Self.token(expiring: now.addingTimeInterval(600)), for: Self.request, marker: marker)
        #expect(cache.token(for: Self.request, now: now)?.value == "cached-token")
        var shorter = Self.request
        shorter.minValid = 60
        #expect(cache.token(for: shorter, now: now.addingTimeInterval(500))?.value == "cached-token")
        #expect(cache.count == 1)
        // Less than min_valid left: the store decides (it may refresh).
        #expect(cache.token(for: Self.request, now: now.addingTimeInterval(301)) == nil)
        #expect(cache.token(for: AgentTokenRequest(selection: .name("other")), now: now) == nil)
    }

    @Test("a store written by another process (sign-in, sign-out, refresh) is seen at the next request")
    func storeWriteSeen() throws {
        let folder = try TemporaryDirectory()
        let store = "\(folder.path)/credentials.json"
        let preferences = "\(folder.path)/preferences.json"
        try Self.replace(store, with: "{}")
        let now = Date(timeIntervalSince1970: 1_000_000)
        let cache = AgentTokenCache()
        for changed in [store, preferences] {
            cache.keep(
                Self.token(expiring: now.addingTimeInterval(3600)), for: Self.request,
                marker: .of([store, preferences]))
            #expect(cache.token(for: Self.request, now: now) != nil)
            // The same size and content, written again: still a change.
            try Self.replace(changed, with: "{}")
            #expect(cache.token(for: Self.request, now: now) == nil, "\(changed)")
        }
        // Removed altogether.
        cache.keep(Self.token(expiring: now.addingTimeInterval(3600)), for: Self.request, marker: .of([store]))
        #expect(unlink(store) == 0)
        #expect(cache.token(for: Self.request, now: now) == nil)
    }
}
