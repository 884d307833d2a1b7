import Foundation
import Synchronization
@testable import PortalAuth
import PortalAuthTesting
@testable import PortalAuthStore
@testable import PortalAuthTransport

/// Test doubles for challenge handling: handlers that answer from a script and count the challenges they get,
/// a prompt with scripted answers, and a fake portal.
enum ChallengeFakes {
    static let portal = URL(string: "https://gis.example.com/portal")!
    static let portalSelf = URL(string: "https://gis.example.com/portal/sharing/rest/portals/self?f=json")!
    static let tokenEnvelope499 = #"{"error":{"code":499,"message":"Token Required","details":[]}}"#
    static let tokenEnvelope498 = #"{"error":{"code":498,"message":"Invalid token.","details":[]}}"#

    /// A pregenerated token credential for the fake portal.
    static func pregenerated(_ token: String, ssl: Bool = false, referer: String? = nil, url: URL = portal)
        -> PregeneratedTokenCredential
    {
        PregeneratedTokenCredential(
            url: url,
            tokenInfo: TokenInfo(
                accessToken: token, expirationDate: Date().addingTimeInterval(3600), isSSLRequired: ssl)!,
            referer: referer)
    }

    /// A response to `request`.
    static func answer(
        _ body: String, status: Int = 200, headers: [(String, String)] = [], to request: TransportRequest
    ) -> TransportResponse {
        TransportResponse(
            statusCode: status,
            headers: TransportHeaders(
                [("Content-Type", "application/json")] + headers.map { (name: $0.0, value: $0.1) }),
            body: Data(body.utf8), url: request.url)
    }

    /// A portal that accepts the tokens in `accepted` (as `X-Esri-Authorization: Bearer` or `token=`), answers 498
    /// for other tokens and 499 without one.
    static func portal(accepting accepted: Set<String>) -> ScriptedHTTPClient {
        ScriptedHTTPClient(respond: { request, _ in
            guard let token = token(in: request) else { return answer(tokenEnvelope499, to: request) }
            return answer(accepted.contains(token) ? #"{"user":{"username":"alice"}}"# : tokenEnvelope498, to: request)
        })
    }

    /// The ArcGIS token a request carries, wherever it is.
    static func token(in request: TransportRequest) -> String? {
        if let header = request.headers["X-Esri-Authorization"] { return String(header.dropFirst("Bearer ".count)) }
        let query = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        return query.first { $0.name == "token" }?.value ?? request.formField("token")
    }

    // MARK: - Handlers

    /// An ArcGIS challenge handler answering each challenge with `answer` (given the challenge and how many came
    /// before), after `delay`.
    final class ArcGISHandler: ArcGISAuthenticationChallengeHandler {
        private let received = Mutex<[ArcGISAuthenticationChallenge]>([])
        private let answer:
            @Sendable (ArcGISAuthenticationChallenge, Int) throws -> ArcGISAuthenticationChallenge.Disposition
        private let delay: Duration

        init(
            delay: Duration = .zero,
            _ answer:
                @escaping @Sendable (ArcGISAuthenticationChallenge, Int) throws ->
                ArcGISAuthenticationChallenge.Disposition
        ) {
            self.answer = answer
            self.delay = delay
        }

        var challenges: [ArcGISAuthenticationChallenge] { received.withLock { $0 } }

        func handleArcGISAuthenticationChallenge(_ challenge: ArcGISAuthenticationChallenge) async throws
            -> ArcGISAuthenticationChallenge.Disposition
        {
            let index = received.withLock { list in
                list.append(challenge)
                return list.count - 1
            }
            if delay > .zero { try await Task.sleep(for: delay) }
            return try answer(challenge, index)
        }
    }

    /// A network challenge handler answering each challenge with `answer` (given the challenge and how many came
    /// before).
    final class NetworkHandler: NetworkAuthenticationChallengeHandler {
        private let received = Mutex<[NetworkAuthenticationChallenge]>([])
        private let answer:
            @Sendable (NetworkAuthenticationChallenge, Int) -> NetworkAuthenticationChallenge.Disposition

        init(
            _ answer:
                @escaping @Sendable (NetworkAuthenticationChallenge, Int) -> NetworkAuthenticationChallenge.Disposition
        ) {
            self.answer = answer
        }

        var challenges: [NetworkAuthenticationChallenge] { received.withLock { $0 } }

        func handleNetworkAuthenticationChallenge(_ challenge: NetworkAuthenticationChallenge) async
            -> NetworkAuthenticationChallenge.Disposition
        {
            let index = received.withLock { list in
                list.append(challenge)
                return list.count - 1
            }
            return answer(challenge, index)
        }
    }

    // MARK: - Prompt

    /// A prompt that gives scripted answers in turn and records what it was asked.
    final class Prompt: AuthenticatorPrompt {
        let canPrompt: Bool
        private let logins: Mutex<[LoginAnswer?]>
        private let certificates: Mutex<[ClientCertificateAnswer?]>
        private let trusts: Bool
        private let asked = Mutex<[String]>([])

        init(
            canPrompt: Bool = true, logins: [LoginAnswer?] = [], certificates: [ClientCertificateAnswer?] = [],
            trusts: Bool = false
        ) {
            self.canPrompt = canPrompt
            self.logins = Mutex(logins)
            self.certificates = Mutex(certificates)
            self.trusts = trusts
        }

        /// What was asked, in order: "login arcGISToken", "login previous: …", "trust", "certificate".
        var questions: [String] { asked.withLock { $0 } }

        func login(_ request: LoginRequest) async throws -> LoginAnswer? {
            asked.withLock {
                $0.append("login \(request.purpose)" + (request.previousFailure.map { " after: \($0)" } ?? ""))
            }
            return logins.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        }

        func shouldTrust(_ certificate: CertificateInfo, for space: ProtectionSpace) async throws -> Bool {
            asked.withLock { $0.append("trust \(space)") }
            return trusts
        }

        func clientCertificate(for space: ProtectionSpace, previousFailure: String?) async throws
            -> ClientCertificateAnswer?
        {
            asked.withLock { $0.append("certificate \(space)" + (previousFailure.map { " after: \($0)" } ?? "")) }
            return certificates.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        }
    }
}
