import Foundation
import Synchronization

/// Keeps one credential's tokens valid: refreshes them when they are about to expire, keeps the
/// newest refresh token (rotation), exchanges an ageing ArcGIS refresh token, and — when the
/// credential lives in a persistent store — does all of that under the store's exclusive lock,
/// re-reading the entry first, so that many processes refreshing at once send one request.
final class TokenKeeper: Sendable {
    /// Where a persistent credential lives.
    struct Persistence: Sendable {
        let store: CredentialStoreFile
        let key: String
    }

    private let state: Mutex<StoredCredential>
    private let inFlight = Mutex<Task<StoredCredential, any Error>?>(nil)
    private let invalidated = Mutex(false)
    private let persistenceState: Mutex<Persistence?>
    let httpClient: any HTTPClient
    let policy: RefreshPolicy
    /// What the credential is for, in messages.
    let target: String

    init(_ credential: StoredCredential, persistence: Persistence?, httpClient: any HTTPClient, policy: RefreshPolicy, target: String) {
        self.state = Mutex(credential)
        self.persistenceState = Mutex(persistence)
        self.httpClient = httpClient
        self.policy = policy
        self.target = target
    }

    /// Where the credential is persisted, if anywhere.
    var persistence: Persistence? { persistenceState.withLock { $0 } }

    /// Persists the credential from now on (refreshes then run under the store's lock).
    func attach(_ persistence: Persistence?) { persistenceState.withLock { $0 = persistence } }

    /// Replaces the credential as last seen (after a re-read of the store).
    func replace(_ credential: StoredCredential) { state.withLock { $0 = credential } }

    /// The credential as last seen.
    var current: StoredCredential { state.withLock { $0 } }

    /// Marks the credential unusable (after sign-out).
    func invalidate() { invalidated.withLock { $0 = true } }

    /// A credential whose `token` (the access token unless told otherwise) is valid for at least
    /// `minimumValidity` (the policy's margin when nil), refreshing first when needed or when `force` is set.
    ///
    /// This is the library's one refresh rule: callers ask for the token they need and how long it must last,
    /// and never decide themselves whether to refresh.
    ///
    /// - Throws: `CredentialError.signInRequired` when the ID token was asked for and, even after a refresh, is not
    ///   valid for `minimumValidity` (a provider may answer a refresh without a new ID token, OIDC Core 12.2): only a
    ///   new sign-in gives one. An expired ID token is never handed out.
    func validCredential(
        minimumValidity: Duration? = nil, force: Bool = false, keeping token: IAPTokenInfo.Token = .accessToken,
        now: @escaping @Sendable () -> Date = Date.init
    ) async throws -> StoredCredential {
        if invalidated.withLock({ $0 }) { throw CredentialError.invalidated(target) }
        let margin = minimumValidity ?? policy.margin
        let snapshot = current
        if !force && !Self.needsRefresh(snapshot, margin: margin, now: now(), keeping: token) { return snapshot }

        let task: Task<StoredCredential, any Error> = inFlight.withLock { running in
            if let running, !force { return running }
            let task = Task { try await self.refreshOnce(margin: margin, force: force, keeping: token, now: now) }
            running = task
            return task
        }
        defer { inFlight.withLock { if $0 == task { $0 = nil } } }
        let refreshed = try await withTaskCancellationHandler { try await task.value } onCancel: { task.cancel() }
        try requireValidIDToken(refreshed, keeping: token, margin: margin, now: now())
        return refreshed
    }

    /// Whether the access token is too close to expiry, or the ArcGIS refresh token to its own, or — when the ID
    /// token is the one asked for — the ID token to its expiry.
    static func needsRefresh(_ credential: StoredCredential, margin: Duration, now: Date, keeping token: IAPTokenInfo.Token = .accessToken) -> Bool {
        if credential.accessTokenExpiresAt.timeIntervalSince(now) <= margin.timeInterval || needsExchange(credential, now: now) {
            return true
        }
        guard token == .idToken, let expiry = credential.idTokenExpiresAt else { return false }
        return expiry.timeIntervalSince(now) <= margin.timeInterval
    }

    /// Throws when the ID token was asked for and is held but is not valid for `margin` (after the refresh that
    /// tried to renew it).
    private func requireValidIDToken(_ credential: StoredCredential, keeping token: IAPTokenInfo.Token, margin: Duration, now: Date) throws {
        guard token == .idToken, credential.idToken != nil, let expiry = credential.idTokenExpiresAt,
              expiry.timeIntervalSince(now) <= margin.timeInterval
        else { return }
        let left = Int(expiry.timeIntervalSince(now).rounded(.down))
        let state = left <= 0 ? "expired at \(expiry.ISO8601Format())" : "is valid for \(left) s only"
        throw CredentialError.signInRequired(
            target, because: "the ID token \(state), less than the \(Int(margin.timeInterval)) s asked for, and the identity "
                + "provider sent no new one with the refreshed tokens")
    }

    /// Whether an ArcGIS refresh token is old enough to be exchanged for a new one.
    ///
    /// The exchange interval is an age, as in `OAuthUserConfiguration` (and the ArcGIS Maps SDKs): a refresh
    /// token issued more than the interval ago is exchanged at the next use, so a sign-in used now and then
    /// never reaches its expiry. The age counts from when the token was issued; entries without that time
    /// count from the expiry minus the lifetime asked for. At most half the lifetime is waited, so an
    /// interval longer than a granted lifetime cannot let the token expire, nor make every call exchange.
    static func needsExchange(_ credential: StoredCredential, now: Date) -> Bool {
        guard credential.kind == .oauthUser, credential.refreshToken != nil,
              let expiry = credential.refreshTokenExpiresAt, let interval = credential.refreshTokenExchangeSeconds, interval > 0
        else { return false }
        let asked = credential.refreshTokenExpirationMinutes.map { TimeInterval($0 * 60) }
        guard let issued = credential.refreshTokenIssuedAt ?? asked.map({ expiry.addingTimeInterval(-$0) }) else {
            return expiry.timeIntervalSince(now) <= TimeInterval(interval)
        }
        let lifetime = expiry.timeIntervalSince(issued)
        return now.timeIntervalSince(issued) >= min(TimeInterval(interval), lifetime / 2)
    }

    // MARK: - Refreshing

    private func refreshOnce(
        margin: Duration, force: Bool, keeping token: IAPTokenInfo.Token = .accessToken, now: @escaping @Sendable () -> Date
    ) async throws -> StoredCredential {
        guard let persistence else {
            let refreshed = try await refresh(current, now: now)
            state.withLock { $0 = refreshed }
            return refreshed
        }
        let started = now()
        let seen = current.accessToken
        return try await persistence.store.withExclusiveAccess { snapshot in
            guard let entry = snapshot.entry(for: persistence.key), let stored = StoredCredential(json: .object(entry)) else {
                throw CredentialError.notStored(self.target)
            }
            // Another process may have refreshed while this one waited for the lock: its token is as new
            // as a refresh from here would give, even when the server's tokens are shorter than the margin
            // (stored times are whole seconds, hence the second of slack).
            let refreshedMeanwhile = stored.accessToken != seen && stored.updatedAt >= started.addingTimeInterval(-1)
            if refreshedMeanwhile || (!force && !Self.needsRefresh(stored, margin: margin, now: now(), keeping: token)) {
                self.state.withLock { $0 = stored }
                return stored
            }
            let refreshed = try await self.refresh(stored, now: now)
            if case .object(let object) = refreshed.json { snapshot.set(object, for: persistence.key) }
            self.state.withLock { $0 = refreshed }
            return refreshed
        }
    }

    /// One refresh (or exchange) against the token endpoint, retrying transient failures with backoff.
    ///
    /// - Throws: `CredentialError.refreshTokenRejected` at once when the provider refuses the refresh token;
    ///   `CredentialError.unavailable` after the policy's attempts at a failing or unreachable provider;
    ///   other errors (TLS verification, an invalid answer) at once, as they are.
    private func refresh(_ credential: StoredCredential, now: @escaping @Sendable () -> Date) async throws -> StoredCredential {
        guard let refreshToken = credential.refreshToken else {
            throw CredentialError.signInRequired(target, because: "the access token expired and there is no refresh token")
        }
        let exchange = Self.needsExchange(credential, now: now())
        var fields: [(String, String)] = [
            ("grant_type", exchange ? "exchange_refresh_token" : "refresh_token"),
            ("client_id", credential.clientID),
            ("refresh_token", refreshToken),
        ]
        if exchange { fields.append(("redirect_uri", credential.redirectURL.absoluteString)) }
        if credential.kind == .iap, !credential.scopes.isEmpty { fields.append(("scope", credential.scopes.joined(separator: " "))) }
        let request = HTTPRequest.form(credential.tokenURL, fields: fields)

        let pauses = policy.backoffs
        var lastError = ""
        for attempt in 0..<policy.attempts {
            // Expiry counts from the moment the request left: the answer's travel time is not validity.
            let sentAt = now()
            do {
                let response = try await send(request)
                let tokens = try TokenResponse.parse(response, endpoint: credential.tokenURL)
                return try credential.updated(with: tokens, now: sentAt)
            } catch let error as TokenEndpointError where error.kind == .refused {
                throw CredentialError.refreshTokenRejected(target, detail: Self.rejection(error))
            } catch where Self.isTransient(error) {
                lastError = "\(error)"
                if attempt < pauses.count { try await Task.sleep(for: pauses[attempt]) }
            }
        }
        throw CredentialError.unavailable(target, attempts: policy.attempts, lastError: lastError)
    }

    /// One request, cut off after the policy's attempt timeout.
    ///
    /// A refresh request that has left cannot be taken back: a provider that rotates refresh tokens has
    /// already replaced the stored one when it answers. So the request is not cancelled with the caller
    /// (Ctrl-C, SIGTERM): its answer is awaited, within the attempt timeout, and stored, and the cancellation
    /// takes effect after that — at the next pause or lock wait. Only SIGKILL can still lose such a sign-in.
    private func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let client = httpClient
        let timeout = policy.attemptTimeout
        let url = RedactedURL(request.url)
        let shielded = Task {
            try await withDeadline(timeout, onTimeout: {
                TransportError(.timedOut, url: url, detail: "no answer within \(timeout)")
            }) {
                try await client.send(request)
            }
        }
        return try await shielded.value
    }

    /// Whether trying again later may help: the provider was unreachable, slow or failing (5xx,
    /// `temporarily_unavailable`, 408, 429). A certificate that does not verify, a redirect or an answer
    /// that is not a token response will not change by retrying.
    static func isTransient(_ error: any Error) -> Bool {
        if let error = error as? TransportError {
            return [.cannotResolveHost, .cannotConnect, .timedOut, .connectionFailed, .invalidResponse, .transferFailed].contains(error.kind)
        }
        if let error = error as? TokenEndpointError {
            return error.kind == .serverFailure || [408, 429].contains(error.statusCode)
        }
        return false
    }

    /// What the provider said when it refused a refresh token, e.g. `invalid_grant` or
    /// `invalid_grant, ArcGIS error 498: refresh_token expired` (never a token).
    static func rejection(_ error: TokenEndpointError) -> String {
        var parts: [String] = []
        if let code = error.errorCode { parts.append(code) }
        if let arcGIS = error.arcGISCode {
            parts.append("ArcGIS error \(arcGIS)" + (error.arcGISMessage.map { ": \($0)" } ?? ""))
        } else if let description = error.errorDescription {
            parts.append(description)
        }
        return parts.isEmpty ? "HTTP \(error.statusCode)" : parts.joined(separator: ", ")
    }
}

// MARK: - Applying a token response

extension StoredCredential {
    /// This credential after a token response: the new access token, the newest refresh token
    /// (the old one is kept only when none was sent), and the new ID token when one came.
    func updated(with tokens: TokenResponse, now: Date) throws -> StoredCredential {
        var copy = self
        copy.accessToken = tokens.accessToken
        copy.accessTokenExpiresAt = now.addingTimeInterval((tokens.expiresIn ?? .seconds(3600)).timeInterval)
        if let refreshToken = tokens.refreshToken, refreshToken != self.refreshToken {
            copy.refreshToken = refreshToken
            copy.refreshTokenIssuedAt = now
            copy.refreshTokenExpiresAt = tokens.refreshTokenExpiresIn.map { now.addingTimeInterval($0.timeInterval) }
        } else if let lifetime = tokens.refreshTokenExpiresIn {
            copy.refreshTokenExpiresAt = now.addingTimeInterval(lifetime.timeInterval)
        }
        if let idToken = tokens.idToken {
            let decoded = try IDToken(compact: idToken)
            try decoded.validate(clientID: clientID, nonce: nil, expectedIssuer: issuer(of: self.idToken), now: now)
            copy.idToken = idToken
            copy.idTokenExpiresAt = decoded.expirationDate
        }
        if let scopes = tokens.scopes { copy.scopes = scopes }
        if let ssl = tokens.isSSLRequired { copy.isSSLRequired = ssl }
        if let username = tokens.username { copy.username = username }
        copy.tokenType = tokens.tokenType
        copy.updatedAt = now
        return copy
    }

    /// The issuer of a previous ID token: a refreshed ID token must come from the same issuer.
    private func issuer(of idToken: String?) -> String? {
        idToken.flatMap { try? IDToken(compact: $0).issuer }
    }
}
