import Foundation
import Logging
import PortalAuthStore
import PortalAuthTransport

/// One `AuthenticationManager.data(for:)` call: attaches the stored credentials, sends, and answers each kind of
/// challenge at most once, so that it always ends.
struct AuthenticatedRequest {
    let manager: AuthenticationManager
    let original: TransportRequest

    /// More than every step below can take (each happens at most once): a guard against a loop, never reached.
    static let maximumAttempts = 8

    /// What has been done so far for this request.
    struct Progress {
        var renewedToken = false
        var renewedIAPToken = false
        var askedArcGIS = false
        var askedIAP = false
        var askedHTTP = false
        var askedClientCertificate = false
        var askedServerTrust = false
        /// The credentials a handler gave: used for the retry even if they do not claim the URL.
        var chosenToken: (ArcGISCredential)?
        var chosenIAP: IAPCredential?
        /// Why a stored credential was left out (it needs a new sign-in): told with the challenge that follows.
        var unusableCredential: String?
        /// The validity the token agent is asked for after it gave a token the server refused (more than that token
        /// had left); nil for the refresh margin.
        var agentMinimumValidity: Duration?
    }

    /// The request as sent, and which credentials it carried.
    struct Prepared {
        var request: TransportRequest
        /// The ArcGIS token credential whose token was sent.
        var token: (ArcGISCredential)?
        /// The ArcGIS token sent: a refusal renews it only while it is still the credential's current token.
        var sentToken: String?
        /// The IAP credential whose token was sent, which of its tokens, and when that was issued.
        var iap: IAPCredential?
        var iapTokenKind: IAPTokenInfo.Token?
        var iapTokenIssuedAt: Date?
        /// The IAP token sent (the `Bearer` value): a refusal renews it only while it is still the current token.
        var sentIAPToken: String?
        /// The credentials chosen for the request, sent or left out because they need a new sign-in: a challenge
        /// must not be answered with them again.
        var consideredToken: (ArcGISCredential)?
        var consideredIAP: IAPCredential?
        /// The token `AuthenticationManager.tokenAgent` gave for the request, when no credential covered it.
        var agentToken: TokenAgent.Token?
    }

    private var url: URL { original.url }
    private var httpClient: any TransportClient { manager.settings.httpClient }

    // MARK: - Sending

    func send() async throws -> TransportResponse {
        var progress = Progress()
        var lastError: (any Error)?
        for _ in 0..<Self.maximumAttempts {
            try Task.checkCancellation()
            let prepared = try await prepare(&progress)
            let response: TransportResponse
            do {
                response = try await httpClient.send(prepared.request)
            } catch let error as TransportError {
                try await answerTransportFailure(error, prepared: prepared, progress: &progress)
                lastError = error
                continue
            }
            let sentBearer = prepared.request.headers["Authorization"]?.lowercased().hasPrefix("bearer ") == true
            guard
                let challenge = DetectedChallenge.detect(
                    in: response, for: url, sentBearerToken: sentBearer,
                    iapConfigurations: manager.knownIAPConfigurations,
                    sentAgentProxyToken: prepared.agentToken?.isForProxy == true)
            else {
                noticeUnknownProxy(response)
                return response
            }
            switch challenge {
            case .arcGISToken(let code, let message):
                try await answerTokenChallenge(
                    code: code, message: message, status: response.statusCode, prepared: prepared, progress: &progress)
            case .identityAwareProxy(let detail):
                try await answerIAPChallenge(
                    detail: detail, status: response.statusCode, prepared: prepared, progress: &progress)
            case .http(let schemes):
                try await answerHTTPChallenge(
                    schemes, status: response.statusCode, prepared: prepared, progress: &progress)
            }
        }
        throw lastError
            ?? AuthenticationChallengeError(
                .tokenRequired, url: url, statusCode: nil,
                detail: "still challenged after \(Self.maximumAttempts) attempts")
    }

    /// Logs a notice when `response` looks like an Identity-Aware Proxy's sign-in request while the manager knows no
    /// IAP configuration at all: the challenge handler then sees no `.iap` challenge, and the app may not know why.
    private func noticeUnknownProxy(_ response: TransportResponse) {
        guard let looks = DetectedChallenge.proxyLookingAnswer(response, for: url),
            manager.knownIAPConfigurations.isEmpty
        else { return }
        manager.settings.logger.notice(
            "the answer looks like an Identity-Aware Proxy's sign-in request, but no IAP configuration is known, so no IAP challenge was raised: register one (AuthenticationManager.iapConfigurations) to sign in through the proxy",
            metadata: ["url": "\(RedactedURL(url))", "answer": "\(looks)"])
    }

    // MARK: - Attaching credentials

    private func prepare(_ progress: inout Progress) async throws -> Prepared {
        var prepared = Prepared(request: original)
        let credentials = manager.arcGISCredentialStore.credentials
        // Whether a credential of the store (or a handler's) covers the URL: else the token agent is asked.
        var covered = false
        if !Self.carriesArcGISToken(original) {
            let stored = credentials.first { $0.kind.arcGISTokenSource != nil && $0.canBeUsed(for: url) }
            if let credential = progress.chosenToken ?? stored, let source = credential.kind.arcGISTokenSource {
                covered = true
                prepared.consideredToken = credential
                if let info = try await usableToken(of: source, progress: &progress) {
                    guard !info.isSSLRequired || url.scheme?.lowercased() == "https" else {
                        throw CredentialError.insecureTransport(
                            credential.targetDescription, url: RedactedURL(url).description)
                    }
                    attach(info.accessToken, referer: credential.referer, to: &prepared.request)
                    prepared.token = credential
                    prepared.sentToken = info.accessToken
                }
            }
        }
        if !original.headers.contains("Authorization") {
            let stored = credentials.lazy.compactMap(\.kind.iap).first { $0.canBeUsed(for: self.url) }
            if let credential = progress.chosenIAP ?? stored {
                covered = true
                prepared.consideredIAP = credential
                do {
                    // The ID token unless the credential says otherwise (`tokenSentToProxy`), refreshed when expired.
                    let token = try await credential.proxyToken()
                    prepared.request.headers.replaceOrAdd(name: "Authorization", value: "Bearer \(token.value)")
                    prepared.iap = credential
                    prepared.iapTokenKind = token.kind
                    prepared.iapTokenIssuedAt = credential.tokensIssuedAt
                    prepared.sentIAPToken = token.value
                } catch let error as CredentialError where error.requiresSignIn {
                    progress.unusableCredential = error.description
                }
            }
        }
        if !covered, let agent = manager.tokenAgent, !Self.carriesArcGISToken(original),
            !original.headers.contains("Authorization")
        {
            try await attachAgentToken(of: agent, to: &prepared, progress: &progress)
        }
        if prepared.consideredToken == nil, prepared.agentToken == nil, !Self.carriesArcGISToken(original),
            let key = ArcGISEnvironment.apiKey, Self.takesAPIKey(url)
        {
            attach(key.rawValue, referer: "", to: &prepared.request)
        }
        let networkStore = manager.networkCredentialStore
        let stored =
            networkStore.holdsNothing ? TransportCredentials() : await networkStore.transportCredentials(for: url)
        var transport = original.credentials
        transport.password = transport.password ?? stored.password
        transport.clientCertificate = transport.clientCertificate ?? stored.clientCertificate
        transport.trustedServerCertificates = transport.trustedServerCertificates ?? stored.trustedServerCertificates
        prepared.request.credentials = transport
        return prepared
    }

    /// Attaches the token agent's token for the URL where a stored credential's would go; none when the agent holds
    /// no usable sign-in for it (then the server's challenge reaches the handler, told why when a sign-in is there
    /// but cannot be refreshed).
    private func attachAgentToken(of agent: TokenAgent, to prepared: inout Prepared, progress: inout Progress)
        async throws
    {
        let token: TokenAgent.Token
        do {
            token = try await agent.token(
                for: url, minimumValidity: progress.agentMinimumValidity ?? manager.settings.refreshPolicy.margin)
        } catch let error as TokenAgentError where error.requiresSignIn {
            if !error.isNothingStored { progress.unusableCredential = error.description }
            return
        }
        guard url.scheme?.lowercased() == "https" || URLNormalization.isLoopbackHost(url.host ?? "") else {
            throw CredentialError.insecureTransport(
                "the token agent's sign-in for \(RedactedURL(url))", url: RedactedURL(url).description)
        }
        if token.isForProxy {
            prepared.request.headers.replaceOrAdd(name: "Authorization", value: "Bearer \(token.value)")
        } else {
            attach(token.value, referer: "", to: &prepared.request)
        }
        prepared.agentToken = token
    }

    /// The credential's valid token, or nil when only a new sign-in could give one (then the request goes without,
    /// and the server's challenge reaches the handler).
    private func usableToken(of source: any ArcGISTokenSource, progress: inout Progress) async throws -> TokenInfo? {
        do {
            return try await source.validTokenInfo(renew: false)
        } catch let error as CredentialError where error.requiresSignIn {
            progress.unusableCredential = error.description
            return nil
        }
    }

    /// Whether `ArcGISEnvironment.apiKey` goes with a request to `url` that no stored credential covers: only over
    /// https to ArcGIS Online and ArcGIS Location Platform hosts (`arcgis.com` and its subdomains), so that the key
    /// never reaches another server.
    static func takesAPIKey(_ url: URL) -> Bool {
        guard url.scheme?.lowercased() == "https", let host = url.host?.lowercased() else { return false }
        return host == "arcgis.com" || host.hasSuffix(".arcgis.com")
    }

    /// Whether the caller already put a token in the request (a header, or `token=` in the query or form body).
    static func carriesArcGISToken(_ request: TransportRequest) -> Bool {
        if request.headers.contains("X-Esri-Authorization") { return true }
        if let query = request.url.query(percentEncoded: true), !query.isEmpty {
            let items = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems ?? []
            if items.contains(where: { $0.name == "token" }) { return true }
        }
        guard isForm(request), let body = request.body else { return false }
        return String(decoding: body, as: UTF8.self).split(separator: "&").contains { $0.hasPrefix("token=") }
    }

    private static func isForm(_ request: TransportRequest) -> Bool {
        request.headers["Content-Type"]?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true
    }

    private func attach(_ token: String, referer: String, to request: inout TransportRequest) {
        if !referer.isEmpty { request.headers.replaceOrAdd(name: "Referer", value: referer) }
        switch manager.arcGISTokenPlacement {
        case .parameter where request.method == .get:
            if var components = URLComponents(url: request.url, resolvingAgainstBaseURL: false) {
                let encoded = String(FormEncoding.encode([("token", token)]).dropFirst("token=".count))
                components.percentEncodedQueryItems =
                    (components.percentEncodedQueryItems ?? []) + [URLQueryItem(name: "token", value: encoded)]
                if let withToken = components.url {
                    request.url = withToken
                    return
                }
            }
        case .parameter where Self.isForm(request):
            var body = request.body ?? Data()
            if !body.isEmpty { body.append(UInt8(ascii: "&")) }
            body.append(Data(FormEncoding.encode([("token", token)]).utf8))
            request.body = body
            return
        default:
            break
        }
        request.headers.replaceOrAdd(name: "X-Esri-Authorization", value: "Bearer \(token)")
    }

    // MARK: - ArcGIS challenges

    private func answerTokenChallenge(
        code: Int, message: String, status: Int, prepared: Prepared, progress: inout Progress
    ) async throws {
        if code == 498, !progress.renewedToken, !progress.askedArcGIS, let token = prepared.agentToken,
            !token.isForProxy
        {
            // Asked again for more validity than the refused token has left: the agent refreshes while it is still
            // the sign-in's current token, else gives the one that replaced it (one renewal per expiry).
            progress.renewedToken = true
            progress.agentMinimumValidity = Self.validity(beyond: token, at: manager.settings.clock.now)
            return
        }
        if code == 498, !progress.renewedToken, !progress.askedArcGIS,
            let source = prepared.token?.kind.arcGISTokenSource,
            let refused = prepared.sentToken
        {
            progress.renewedToken = true
            do {
                // Renewed only while the refused token is still the current one: many requests refused at once
                // for one expiry make one renewal.
                _ = try await source.renewedTokenInfo(refused: refused)
                return
            } catch let error as CredentialError where error.requiresSignIn {
                progress.unusableCredential = error.description
            }
        }
        var detail = "ArcGIS error \(code): \(message)"
        if let reason = progress.unusableCredential { detail += "; \(reason)" }
        let error = AuthenticationChallengeError(
            code == 499 ? .tokenRequired : .invalidToken, url: url, statusCode: status, detail: detail,
            credentialWasRefused: progress.askedArcGIS && prepared.token != nil)
        guard !progress.askedArcGIS else { throw error }
        progress.askedArcGIS = true
        let kind = await TokenChallengeKind.kind(for: url, httpClient: httpClient)
        let challenge = ArcGISAuthenticationChallenge(requestURL: url, kind: kind, error: error, httpClient: httpClient)
        try await askArcGISHandler(challenge, refused: prepared.consideredToken, progress: &progress)
    }

    /// The validity to ask the token agent for after `token` was refused: one second beyond what it has left at `now`.
    static func validity(beyond token: TokenAgent.Token, at now: Date) -> Duration {
        .seconds(max(0, Int(token.expirationDate.timeIntervalSince(now).rounded(.up))) + 1)
    }

    /// A token younger than this is not refreshed when the proxy refuses it: a fresh token would be refused the same
    /// way, and each refresh spends a (rotating) refresh token.
    static let minimumIAPTokenAgeForRefresh: TimeInterval = 60

    private func answerIAPChallenge(detail: String, status: Int, prepared: Prepared, progress: inout Progress)
        async throws
    {
        if let credential = prepared.iap {
            let issued = prepared.iapTokenIssuedAt ?? credential.tokensIssuedAt
            let age = manager.settings.clock.now.timeIntervalSince(issued)
            if !progress.renewedIAPToken, !progress.askedIAP, age >= Self.minimumIAPTokenAgeForRefresh {
                progress.renewedIAPToken = true
                do {
                    if let refused = prepared.sentIAPToken {
                        try await credential.renewProxyToken(refused: refused)
                    } else {
                        _ = try await credential.proxyToken(forceRefresh: true)
                    }
                    return
                } catch let error as CredentialError where error.requiresSignIn {
                    progress.unusableCredential = error.description
                }
            } else {
                // A token just issued (by a refresh, a sign-in, or less than a minute ago) was refused: signing in
                // again with the same configuration would bring the same kind of token.
                throw AuthenticationChallengeError(
                    .iapTokenRefused, url: url, statusCode: status, detail: detail, credentialWasRefused: true,
                    refusedIAPToken: prepared.iapTokenKind ?? credential.tokenSentToProxy)
            }
        }
        if let token = prepared.agentToken, token.isForProxy {
            // The store path's rule: a token issued a minute ago or more is asked for once more, with more validity
            // than it has left, so that the agent refreshes it (under the store's lock) while it is still the
            // sign-in's current token, or hands out the one that already replaced it (one refresh per refusal).
            let now = manager.settings.clock.now
            if !progress.renewedIAPToken, !progress.askedIAP, let issued = token.issueDate,
                now.timeIntervalSince(issued) >= Self.minimumIAPTokenAgeForRefresh
            {
                progress.renewedIAPToken = true
                progress.agentMinimumValidity = Self.validity(beyond: token, at: now)
                return
            }
            // A token just issued (or by an agent that does not say when) was refused: the proxy does not accept
            // that kind, and a new one would be refused the same way.
            throw AuthenticationChallengeError(
                .iapTokenRefused, url: url, statusCode: status, detail: detail, credentialWasRefused: true,
                refusedIAPToken: token.isIDToken ? .idToken : .accessToken)
        }
        let said = progress.unusableCredential.map { "\(detail); \($0)" } ?? detail
        let error = AuthenticationChallengeError(
            .identityAwareProxy, url: url, statusCode: status, detail: said,
            credentialWasRefused: progress.askedIAP && prepared.iap != nil)
        guard !progress.askedIAP else { throw error }
        progress.askedIAP = true
        let challenge = ArcGISAuthenticationChallenge(requestURL: url, kind: .iap, error: error, httpClient: httpClient)
        try await askArcGISHandler(challenge, refused: prepared.consideredIAP, progress: &progress)
    }

    /// Asks the ArcGIS handler (one challenge at a time) and stores its credential; returns to retry, throws to fail.
    private func askArcGISHandler(
        _ challenge: ArcGISAuthenticationChallenge, refused: ArcGISCredential?, progress: inout Progress
    ) async throws {
        let store = manager.arcGISCredentialStore
        let wantsIAP = challenge.kind == .iap
        let chosen: ArcGISCredential = try await manager.challengeQueue.run {
            // Another request may have answered the same challenge while this one waited.
            let now = store.credentials.first { ($0.kind.iap != nil) == wantsIAP && $0.canBeUsed(for: url) }
            if let now, now !== refused { return now }
            guard let handler = manager.arcGISAuthenticationChallengeHandler else { throw challenge.error }
            switch try await handler.handleArcGISAuthenticationChallenge(challenge) {
            case .continueWithCredential(let credential):
                try await store.addAndPersist(credential)
                // The refused credential would be found first again: the new one takes its place.
                if let refused, refused !== credential, credential.canBeUsed(for: url) {
                    try await store.remove(refused)
                }
                return credential
            case .continueWithoutCredential:
                throw challenge.error
            case .cancel:
                throw ArcGISChallengeCancellationError(requestURL: url)
            }
        }
        if let iap = chosen.kind.iap {
            progress.chosenIAP = iap
            progress.askedIAP = true
        } else {
            progress.chosenToken = chosen
            progress.askedArcGIS = true
        }
        progress.unusableCredential = nil
    }

    // MARK: - Network challenges

    private func answerHTTPChallenge(
        _ schemes: [DetectedChallenge.Scheme], status: Int, prepared: Prepared, progress: inout Progress
    ) async throws {
        let offered = schemes.map(\.kind.description).joined(separator: ", ")
        let error = AuthenticationChallengeError(
            .httpAuthentication, url: url, statusCode: status, detail: "HTTP \(status), \(offered)",
            credentialWasRefused: prepared.request.credentials.password != nil)
        guard !progress.askedHTTP, let space = ProtectionSpace(url: url) else { throw error }
        progress.askedHTTP = true
        var seen: Set<NetworkAuthenticationChallenge.Kind> = []
        let challenges = schemes.filter { seen.insert($0.kind).inserted }.map {
            NetworkAuthenticationChallenge(
                kind: $0.kind, requestURL: url, protectionSpace: space, realm: $0.realm, error: error)
        }
        try await askNetworkHandler(challenges)
    }

    private func answerTransportFailure(_ error: TransportError, prepared: Prepared, progress: inout Progress)
        async throws
    {
        guard url.scheme?.lowercased() == "https", let space = ProtectionSpace(url: url),
            manager.networkAuthenticationChallengeHandler != nil  // nobody to ask: no need to probe the server
        else { throw error }
        let probe = ServerCertificateProbe(
            configuration: (httpClient as? CurlHTTPClient)?.configuration ?? TransportConfiguration())
        if error.kind == .tlsVerificationFailed {
            guard !progress.askedServerTrust else { throw error }
            progress.askedServerTrust = true
            guard let certificate = try? await probe.certificate(of: url) else { throw error }
            let challenge = NetworkAuthenticationChallenge(
                kind: .serverTrust, requestURL: url, protectionSpace: space, serverCertificate: certificate,
                error: error)
            try await askNetworkHandler([challenge])
            return
        }
        guard !progress.askedClientCertificate else {
            throw clientCertificateError(
                error, refused: prepared.request.credentials.clientCertificate != nil, progress: progress)
        }
        let asked: Bool
        switch error.kind {
        case .clientCertificateRequired:
            asked = true
        case .connectionFailed, .tlsHandshakeFailed:
            // Over TLS 1.3 a missing certificate is refused after the handshake, often as a bare reset: ask the
            // server's handshake whether it wants one.
            asked = (try? await probe.asksForClientCertificate(url)) ?? false
        default:
            asked = false
        }
        guard asked else { throw error }
        progress.askedClientCertificate = true
        let challenge = NetworkAuthenticationChallenge(
            kind: .clientCertificate, requestURL: url, protectionSpace: space,
            error: clientCertificateError(
                error, refused: prepared.request.credentials.clientCertificate != nil, progress: progress))
        try await askNetworkHandler([challenge])
    }

    /// The error of a network challenge the handler left unanswered; when it is an `Authenticator` whose prompt
    /// could not ask (no terminal), the error says so, naming the challenge, rather than failing as a bare refusal.
    static func unanswered(
        _ challenge: NetworkAuthenticationChallenge, by handler: any NetworkAuthenticationChallengeHandler
    ) -> any Error {
        guard let error = challenge.error as? AuthenticationChallengeError,
            let authenticator = handler as? Authenticator,
            let prompt = authenticator.prompt, !prompt.canPrompt, challenge.kind != .serverTrust,
            challenge.kind != .negotiate
        else { return challenge.error }
        let what = challenge.kind == .clientCertificate ? "a client certificate" : "a username and password"
        return AuthenticationChallengeError(
            error.kind, url: challenge.requestURL, statusCode: error.statusCode,
            detail: error.detail + "; nobody could be asked for \(what) (no terminal): run where a person can answer, "
                + "give the Authenticator a prompt, or add a credential to the network credential store first",
            credentialWasRefused: error.credentialWasRefused)
    }

    private func clientCertificateError(_ error: TransportError, refused: Bool, progress: Progress)
        -> AuthenticationChallengeError
    {
        AuthenticationChallengeError(
            .clientCertificate, url: url, statusCode: nil, detail: error.detail, credentialWasRefused: refused)
    }

    /// Asks the network handler about each challenge in turn (the next only after `rejectProtectionSpace`) and
    /// stores the credential it gives; returns to retry, throws to fail.
    private func askNetworkHandler(_ challenges: [NetworkAuthenticationChallenge]) async throws {
        guard let first = challenges.first else { return }
        let store = manager.networkCredentialStore
        try await manager.challengeQueue.run {
            guard let handler = manager.networkAuthenticationChallengeHandler else { throw first.error }
            for challenge in challenges {
                switch await handler.handleNetworkAuthenticationChallenge(challenge) {
                case .continueWithCredential(let credential):
                    if case .serverTrust = credential {
                        guard let certificate = challenge.serverCertificate else { throw challenge.error }
                        try await store.trust(certificate, for: challenge.protectionSpace)
                    } else {
                        try await store.add(credential, for: challenge.protectionSpace)
                    }
                    return
                case .continueWithoutCredential:
                    throw Self.unanswered(challenge, by: handler)
                case .cancel:
                    throw ArcGISChallengeCancellationError(requestURL: url)
                case .rejectProtectionSpace:
                    continue
                }
            }
            throw first.error
        }
    }
}
