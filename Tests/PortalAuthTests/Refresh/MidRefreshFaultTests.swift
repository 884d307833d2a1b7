import Foundation
import Glibc
import Testing
@testable import PortalAuth
import PortalAuthTesting
@testable import PortalAuthCore
@testable import PortalAuthStore
@testable import PortalAuthTransport

/// Faults in the middle of a refresh that must not cost the sign-in when the provider rotates refresh tokens
/// (the old one is dead once sent): a request that may have arrived is not sent again, space for the new
/// tokens is reserved before sending, tokens the store could not take stay in memory, and a bad ID token is
/// refused alone.
@Suite("Token keeper: faults mid-refresh with rotating refresh tokens")
struct MidRefreshFaultTests {
    typealias Fixture = TokenKeeperTests

    // MARK: - A request that may have reached the provider

    @Test(
        "a failure after the request may have arrived is not retried with the spent refresh token",
        arguments: [
            ("timed out", ScriptedHTTPClient.unreachable(.timedOut)),
            ("connection reset", ScriptedHTTPClient.unreachable(.connectionFailed)),
            ("not HTTP", ScriptedHTTPClient.unreachable(.invalidResponse)),
            ("500", ScriptedHTTPClient.json(#"{"error":"server_error"}"#, status: 500)),
            (
                "502 HTML",
                Result<TransportResponse, any Error>.success(
                    TransportResponse(
                        statusCode: 502, headers: [("Content-Type", "text/html")],
                        body: Data("<title>Bad Gateway</title>".utf8), url: ScriptedHTTPClient.tokenURL))
            ),
            ("504", ScriptedHTTPClient.json("{}", status: 504)),
            ("portal envelope 500", ScriptedHTTPClient.json(#"{"error":{"code":500,"message":"Internal error"}}"#)),
        ] as [(String, Result<TransportResponse, any Error>)])
    func possiblyDeliveredNotResent(name: String, answer: Result<TransportResponse, any Error>) async throws {
        let record = Fixture.record(.iap, refresh: "secret-refresh")
        let (temporary, store) = try await Fixture.seeded(with: record)
        defer { withExtendedLifetime(temporary) {} }
        let before = try contents(of: store.path)
        let client = ScriptedHTTPClient([answer, ScriptedHTTPClient.tokens("access-2", refresh: "refresh-2")])
        let keeper = Fixture.persisted(record, in: store, client)

        let error = try await #require(throws: CredentialError.self) { try await keeper.validCredential() }
        #expect(client.count == 1, "\(name): the spent refresh token was sent again")
        #expect(error.category == .unavailable, "\(name)")
        #expect(!error.requiresSignIn)
        #expect(
            error.description.contains("may have reached") && error.description.contains("not sent again"), "\(error)")
        #expect(!error.description.contains("secret-"))
        #expect(try contents(of: store.path) == before, "\(name): the store changed")
    }

    @Test(
        "a failure that certainly happened before the provider used the token is retried",
        arguments: [
            ("connection refused", ScriptedHTTPClient.unreachable(.cannotConnect)),
            ("unknown host", ScriptedHTTPClient.unreachable(.cannotResolveHost)),
            ("503", ScriptedHTTPClient.json(#"{"error":"temporarily_unavailable"}"#, status: 503)),
            ("429", ScriptedHTTPClient.json("{}", status: 429)),
            ("408", ScriptedHTTPClient.json("{}", status: 408)),
        ] as [(String, Result<TransportResponse, any Error>)])
    func notDeliveredRetried(name: String, answer: Result<TransportResponse, any Error>) async throws {
        let client = ScriptedHTTPClient([answer, ScriptedHTTPClient.tokens("access-2", refresh: "refresh-2")])
        let fresh = try await Fixture.keeper(Fixture.record(.iap), client).validCredential()
        #expect(client.count == 2, "\(name)")
        #expect(fresh.refreshToken == "refresh-2")
    }

    @Test("by default an answer is waited for as long as the transport allows (60 s), not cut at 9 s and asked again")
    func slowAnswerWaitedFor() async throws {
        #expect(RefreshPolicy().attemptTimeout >= TransportConfiguration().timeouts.total)
        // Waiters for the store's lock outlast such a wait.
        #expect(CredentialStoreFile.Configuration().lockTimeout > RefreshPolicy().attemptTimeout)
        // An answer later than the old 9 s cap would be, scaled down: the policy's own limit is what counts.
        let client = ScriptedHTTPClient(
            delay: .milliseconds(300), [ScriptedHTTPClient.tokens("access-2", refresh: "refresh-2")])
        let policy = RefreshPolicy(attempts: 3, initialBackoff: .milliseconds(10), attemptTimeout: .seconds(60))
        let fresh = try await Fixture.keeper(Fixture.record(.iap), client, policy: policy).validCredential()
        #expect(client.count == 1)
        #expect(fresh.refreshToken == "refresh-2")
    }

    // MARK: - Refused ID token

    /// A token response with a rotated refresh token and `idToken`.
    static func tokens(_ access: String, refresh: String, idToken: String) -> Result<TransportResponse, any Error> {
        let object: JSONObject = [
            "access_token": .string(access), "refresh_token": .string(refresh), "id_token": .string(idToken),
            "expires_in": .integer(3600), "token_type": .string("Bearer"),
        ]
        return ScriptedHTTPClient.json(JSONValue.object(object).serialized(indent: 0))
    }

    static func idToken(
        aud: String = "client-1", exp: Date = Date().addingTimeInterval(3600), iss: String = "https://idp.example/o",
        sub: String = "42",
        nonce: String? = nil
    ) -> String {
        IDTokenTests.token(
            IDTokenTests.payload(
                aud: .string(aud), nonce: nonce, exp: exp.timeIntervalSince1970, iss: iss,
                iat: Date().timeIntervalSince1970, sub: sub))
    }

    @Test(
        "a refreshed ID token that fails a check is refused alone: the rotated refresh token and the access token are kept",
        arguments: [
            ("aud", idToken(aud: "someone-else")),
            ("exp", idToken(exp: Date().addingTimeInterval(-3600))),
            ("iss", idToken(iss: "https://evil.example/o")),
            // Issue 25.6: another user's ID token on refresh (OIDC Core 12.2) is an identity switch; so is a new nonce.
            ("sub", idToken(sub: "someone-else")),
            ("nonce", idToken(nonce: "another-sign-in")),
            ("format", "not-a-jwt"),
        ])
    func badIDTokenRefusedAlone(check: String, bad: String) async throws {
        var record = Fixture.record(.iap, refresh: "refresh-1")
        let good = Self.idToken()
        record.idToken = good
        record.idTokenExpiresAt = Date().addingTimeInterval(600)
        // The provider lists unsigned ID tokens (IDTokenTests.token): a refreshed one fails only the check under test.
        record.signsIDTokensWithNone = true
        let (temporary, store) = try await Fixture.seeded(with: record)
        defer { withExtendedLifetime(temporary) {} }
        let client = ScriptedHTTPClient([
            Self.tokens("access-2", refresh: "refresh-2", idToken: bad),
            Self.tokens("access-3", refresh: "refresh-3", idToken: Self.idToken()),
        ])
        let keeper = Fixture.persisted(record, in: store, client)

        let fresh = try await keeper.validCredential()
        #expect(fresh.accessToken == "access-2")
        #expect(fresh.refreshToken == "refresh-2", "\(check): the rotated refresh token was dropped")
        #expect(fresh.idToken == good, "\(check): the ID token accepted before stays")
        let refusal = try #require(fresh.idTokenRefusal, "\(check): the refusal is not reported")
        #expect(refusal.contains("refused"), "\(refusal)")
        #expect(!refusal.contains(bad), "the refusal quotes the token")
        let stored = try #require(try Fixture.stored(record, in: store))
        #expect(stored.refreshToken == "refresh-2")
        #expect(stored.idTokenRefusal == refusal, "the refusal is stored for later commands")

        // A later good ID token is taken and clears the refusal.
        let next = try await keeper.validCredential(force: true)
        #expect(next.refreshToken == "refresh-3")
        #expect(next.idTokenRefusal == nil)
        #expect(next.idToken != good)
        #expect(client.forms.map { $0["refresh_token"] } == ["refresh-1", "refresh-2"])
    }

    // MARK: - The store cannot take the new tokens

    @Test(
        "the store write failing after a rotating refresh: an error saying so, the tokens kept in memory and written at the next use"
    )
    func writeFailsAfterAnswer() async throws {
        let record = Fixture.record(.iap, refresh: "refresh-1")
        let (temporary, store) = try await Fixture.seeded(with: record)
        defer { withExtendedLifetime(temporary) {} }
        let directory = StoreFileSystem.parentDirectory(of: store.path)
        let prefix = AtomicFileWriter.temporaryPrefix(for: store.path)
        // While the provider answers, the space reserved for the write disappears (as if the file system failed).
        let client = ScriptedHTTPClient(script: { index, _ in
            if index == 0 {
                for name in try FileManager.default.contentsOfDirectory(atPath: directory) where name.hasPrefix(prefix)
                {
                    unlink("\(directory)/\(name)")
                }
            }
            return try ScriptedHTTPClient.tokens("access-\(index + 2)", refresh: "refresh-\(index + 2)").get()
        })
        let keeper = Fixture.persisted(record, in: store, client)

        let error = try await #require(throws: CredentialError.self) { try await keeper.validCredential() }
        #expect(error.category == .local)
        #expect(!error.requiresSignIn)
        #expect(
            error.description.contains("could not be written") && error.description.contains(store.path), "\(error)")
        #expect(!error.description.contains("refresh-2"))
        #expect(keeper.current.refreshToken == "refresh-2", "the rotated refresh token is kept in memory")
        #expect(try Fixture.stored(record, in: store)?.refreshToken == "refresh-1")

        // The next use writes what is held, without another request.
        let again = try await keeper.validCredential()
        #expect(again.accessToken == "access-2")
        #expect(client.count == 1)
        #expect(try Fixture.stored(record, in: store)?.refreshToken == "refresh-2")
    }

    @Test(
        "a full file system: nothing is sent, the stored refresh token stays usable, and the refresh works once there is room",
        .tags(.root), ExternalTools.condition,
        .enabled(if: geteuid() == 0, "needs root to mount a small tmpfs (scripts/test runs it as root)"))
    func diskFullBeforeSending() async throws {
        let mount = try SmallFileSystem(kilobytes: 512)
        defer { mount.unmount() }
        let record = Fixture.record(.iap, refresh: "refresh-1")
        let store = CredentialStoreFile(location: StoreLocation(path: "\(mount.path)/state/credentials.json"))
        guard case .object(let entry) = record.json else { throw CancellationError() }
        try await store.update { $0.set(entry, for: record.key) }
        let filler = try mount.fill()

        let client = ScriptedHTTPClient([ScriptedHTTPClient.tokens("access-2", refresh: "refresh-2")])
        let keeper = Fixture.persisted(record, in: store, client)
        let error = try await #require(throws: CredentialStoreError.self) { try await keeper.validCredential() }
        #expect(client.count == 0, "the refresh token was spent although its successor could not be stored")
        #expect(error.kind == .fileSystem)
        #expect(
            error.description.contains("No space left") && error.description.contains("nothing was sent"), "\(error)")
        #expect(try Fixture.stored(record, in: store)?.refreshToken == "refresh-1")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: "\(mount.path)/state").filter { $0.contains(".tmp-") }
                .isEmpty)

        unlink(filler)
        let fresh = try await keeper.validCredential()
        #expect(fresh.refreshToken == "refresh-2")
        #expect(try Fixture.stored(record, in: store)?.refreshToken == "refresh-2")
    }
}
