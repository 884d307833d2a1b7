import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthTransport

/// An operation's time limit holds across requests and retries (issue 12, item 7): a hung revocation endpoint with
/// three attempts of 60 s each once took three minutes against a 20-second limit.
@Suite("An overall deadline for the HTTP client")
struct OverallDeadlineTests {
    @Test(
        "revocation retries against a hung endpoint end with a timeout once the deadline has passed",
        .timeLimit(.minutes(1)),
        .tags(.python), ExternalTools.condition)
    func hungRevocation() async throws {
        try await FaultServer.with { server async throws in
            var configuration = TransportConfiguration(timeouts: .init(connect: .seconds(10), total: .seconds(60)))
            configuration.deadline = ContinuousClock.now + .seconds(1)
            let client = CurlHTTPClient(configuration: configuration)
            let record = StoredCredential.revocationTestRecord
            let revocation = TokenRevocation(
                style: .rfc7009, endpoint: server.url("/stall"), record: record, target: "test")
            do {
                try await revocation.send(
                    with: client, policy: RefreshPolicy(attempts: 3, initialBackoff: .milliseconds(10)))
                Issue.record("a hung endpoint cannot confirm a revocation")
            } catch let error as RevocationError {
                #expect(error.category == .timedOut, "\(error)")
            }
        }
    }

    @Test(
        "a request marked to outlast the deadline (a refresh once sent) gets its answer after it; an unmarked one is cut",
        .timeLimit(.minutes(1)), .tags(.python), ExternalTools.condition)
    func outlastingRequest() async throws {
        try await FaultServer.with { server async throws in
            func client() -> CurlHTTPClient {
                var configuration = TransportConfiguration(timeouts: .init(connect: .seconds(10), total: .seconds(30)))
                configuration.deadline = ContinuousClock.now + .milliseconds(300)
                return CurlHTTPClient(configuration: configuration)
            }
            var marked = TransportRequest.get(server.url("/slow?seconds=1"))
            marked.outlastsDeadline = true
            let response = try await client().send(marked)
            #expect(response.statusCode == 200)
            do {
                _ = try await client().send(.get(server.url("/slow?seconds=1")))
                Issue.record("an unmarked request ran past the deadline")
            } catch let error as TransportError {
                #expect(error.kind == .timedOut, "\(error)")
            }
        }
    }

    @Test("a request started after the deadline fails at once, naming the limit, without connecting")
    func afterDeadline() async throws {
        var configuration = TransportConfiguration()
        configuration.deadline = ContinuousClock.now - .seconds(1)
        do {
            _ = try await CurlHTTPClient(configuration: configuration).send(
                .get(URL(string: "https://unreachable.invalid/")!))
            Issue.record("must fail")
        } catch let error as TransportError {
            #expect(error.kind == .timedOut)
            #expect(error.description.contains("time limit"))
        }
    }
}

extension StoredCredential {
    /// A portal entry whose tokens are never sent anywhere real.
    static var revocationTestRecord: StoredCredential {
        StoredCredential(
            json: .object([
                "kind": .string("oauth-user"), "client_id": .string("c"),
                "redirect_url": .string("http://127.0.0.1/cb"),
                "token_url": .string("https://portal.example/sharing/rest/oauth2/token"), "access_token": .string("AT"),
                "access_token_expires_at": .integer(4_102_444_800), "refresh_token": .string("RT"),
                "portal_url": .string("https://portal.example/portal"),
            ]))!
    }
}
