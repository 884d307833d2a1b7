package import Foundation
import Logging
import PortalAuthCore
import PortalAuthStore
import PortalAuthTransport
import Synchronization

/// Keeps one credential's tokens valid: refreshes them when they are about to expire, keeps the
/// newest refresh token (rotation), exchanges an ageing ArcGIS refresh token, and — when the
/// credential lives in a persistent store — does all of that under the store's exclusive lock,
/// re-reading the entry first, so that many processes refreshing at once send one request.
package final class TokenKeeper: Sendable {
    /// Where a persistent credential lives.
    package struct Persistence: Sendable {
        let store: CredentialStoreFile
        let key: String
        /// The entry keeps its secrets in the store file because the keyring could not take them at an earlier
        /// write (see `CredentialStoreFile.withExclusiveAccess(deferringKeyringFailure:)`): the next use moves them.
        var keyringMovePending = false
    }

    /// A refresh under way. A class around the task, so that a keeper that never refreshes (`portal-auth token`
    /// with a valid token) never needs the metadata of `Task<StoredCredential, any Error>`: making it checks the
    /// type's generic requirements, which costs the first time a scan of every protocol conformance in the binary.
    private final class Refresh: Sendable {
        let task: Task<StoredCredential, any Error>

        init(_ task: Task<StoredCredential, any Error>) { self.task = task }
    }

    private let state: Mutex<StoredCredential>
    private let inFlight = Mutex<Refresh?>(nil)
    private let invalidated = Mutex(false)
    private let persistenceState: Mutex<Persistence?>
    /// Tokens refreshed by this process that could not be written to the store (disk full, I/O error), and
    /// the refresh token they replaced: written at the next refresh if the store still holds that token.
    private let unsaved = Mutex<(spent: String, credential: StoredCredential)?>(nil)
    private let keyringDeferral = Mutex<String?>(nil)
    let httpClient: any TransportClient
    let policy: RefreshPolicy
    /// What the credential is for, in messages.
    let target: String
    /// Where refreshes report what the caller should know but that does not fail them (a refused ID token).
    let logger: Logger

    init(
        _ credential: StoredCredential, persistence: Persistence?, httpClient: any TransportClient,
        policy: RefreshPolicy, target: String,
        logger: Logger = Logger(label: "PortalAuth.refresh", factory: { _ in SwiftLogNoOpLogHandler() })
    ) {
        self.state = Mutex(credential)
        self.persistenceState = Mutex(persistence)
        self.httpClient = httpClient
        self.policy = policy
        self.target = target
        self.logger = logger
    }

    /// Where the credential is persisted, if anywhere.
    var persistence: Persistence? { persistenceState.withLock { $0 } }

    /// Persists the credential from now on (refreshes then run under the store's lock).
    func attach(_ persistence: Persistence?) { persistenceState.withLock { $0 = persistence } }

    /// Replaces the credential as last seen (after a re-read of the store).
    func replace(_ credential: StoredCredential) { state.withLock { $0 = credential } }

    /// Changes the credential as last seen in place (a setting kept with it), atomically with a refresh's update.
    func update(_ change: (inout StoredCredential) -> Void) { state.withLock { change(&$0) } }

    /// The credential as last seen.
    var current: StoredCredential { state.withLock { $0 } }

    /// Why the last refresh's tokens went to the store file (0600) instead of the keyring, which could not take them
    /// when they came (locked, gone, hung); nil when they went where they belong. They move into the keyring at the
    /// next use while it answers.
    package var keyringFallback: String? { keyringDeferral.withLock { $0 } }

    /// Marks the credential unusable (after sign-out).
    func invalidate() { invalidated.withLock { $0 = true } }

    /// Whether `validCredential(minimumValidity:keeping:)`, called within `slack` from now, hands out the tokens held
    /// as they are: no refresh and no store write, so a caller may leave out what only guards those (the tool's
    /// signal watcher, a thread and a pipe, on every `portal-auth token`). `slack` covers the time until that call:
    /// freshness only decreases with time, so tokens fresh at its end are fresh all through it.
    package func holdsFreshTokens(
        minimumValidity: Duration?, keeping token: IAPTokenInfo.Token = .accessToken, slack: Duration = .seconds(1)
    ) -> Bool {
        if invalidated.withLock({ $0 }) { return false }
        let pendingWrite = persistence.map { $0.keyringMovePending || unsaved.withLock { $0 != nil } } ?? false
        let snapshot = current
        return !pendingWrite && snapshot.refreshTokenRefusal == nil
            && !Self.needsRefresh(
                snapshot, margin: minimumValidity ?? policy.margin, now: Date().addingTimeInterval(slack.timeInterval),
                keeping: token)
    }

    /// A credential whose `token` (the access token unless told otherwise) is valid for at least
    /// `minimumValidity` (the policy's margin when nil), refreshing first when needed or when `force` is set.
    ///
    /// With `force` and `refused` (the token a server refused, access or ID token), one refresh per expiry however
    /// many requests saw it refused, in this process and across processes: the refresh happens only while
    /// `refused` is still the current token — in memory, then again in the store under its lock — and a refresh
    /// under way is joined; once another caller or process refreshed, its tokens are returned. Without `refused`,
    /// `force` always refreshes (`portal-auth refresh`).
    ///
    /// This is the library's one refresh rule: callers ask for the token they need and how long it must last,
    /// and never decide themselves whether to refresh.
    ///
    /// - Throws: `CredentialError.signInRequired` when the ID token was asked for and, even after a refresh, is not
    ///   valid for `minimumValidity` (a provider may answer a refresh without a new ID token, OIDC Core 12.2): only a
    ///   new sign-in gives one. An expired ID token is never handed out.
    func validCredential(
        minimumValidity: Duration? = nil, force: Bool = false, refused: String? = nil,
        keeping token: IAPTokenInfo.Token = .accessToken,
        now: @escaping @Sendable () -> Date = Date.init
    ) async throws -> StoredCredential {
        if invalidated.withLock({ $0 }) { throw CredentialError.invalidated(target) }
        let margin = minimumValidity ?? policy.margin
        let snapshot = current
        // A refused token that is no longer the current one was renewed already: no second refresh.
        let force = force && Self.isCurrent(refused, in: snapshot)
        // Tokens refreshed earlier that the store could not take yet are written first (under the lock).
        let pendingWrite = persistence.map { $0.keyringMovePending || unsaved.withLock { $0 != nil } } ?? false
        // A refresh token the provider refused makes the sign-in unusable (the same truth as `status`): the refresh
        // path re-reads the store (a new sign-in may have replaced the entry) and otherwise says that one is needed.
        if !force && !pendingWrite && snapshot.refreshTokenRefusal == nil
            && !Self.needsRefresh(snapshot, margin: margin, now: now(), keeping: token)
        {
            return snapshot
        }

        let refresh: Refresh = inFlight.withLock { running in
            // A refresh under way replaces the refused token too: joined, not repeated.
            if let running, !force || refused != nil { return running }
            let refresh = Refresh(
                Task.keepingExecutor {
                    try await self.refreshOnce(margin: margin, force: force, refused: refused, keeping: token, now: now)
                })
            running = refresh
            return refresh
        }
        defer { inFlight.withLock { if $0 === refresh { $0 = nil } } }
        let task = refresh.task
        let refreshed = try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            task.cancel()
        }
        try requireValidIDToken(refreshed, previous: snapshot, keeping: token, margin: margin, now: now())
        try requireFreshAccessToken(refreshed, keeping: token, margin: margin, now: now())
        return refreshed
    }

    /// Whether `refused` (a token a server refused; nil: none named) is still one of `credential`'s tokens.
    static func isCurrent(_ refused: String?, in credential: StoredCredential) -> Bool {
        guard let refused else { return true }
        return refused == credential.accessToken || (credential.idToken != nil && refused == credential.idToken)
    }

    /// Whether the access token is not fresh enough for `margin`, or the ArcGIS refresh token is due for its exchange,
    /// or — when the ID token is the one asked for — the ID token is not fresh enough: the one rule of
    /// `TokenFreshness` for both tokens (a token shorter than `margin` is fresh in the first half of its lifetime).
    package static func needsRefresh(
        _ credential: StoredCredential, margin: Duration, now: Date, keeping token: IAPTokenInfo.Token = .accessToken
    ) -> Bool {
        let accessFresh = TokenFreshness.isFresh(
            issuedAt: credential.accessTokenIssuedAt, expiresAt: credential.accessTokenExpiresAt,
            minimumValidity: margin, now: now)
        if !accessFresh || needsExchange(credential, now: now) { return true }
        guard token == .idToken, let expiry = credential.idTokenExpiresAt else { return false }
        return !TokenFreshness.isFresh(
            issuedAt: credential.idTokenIssuedAt, expiresAt: expiry, minimumValidity: margin, now: now)
    }

    /// Throws when the ID token was asked for and is held but is not fresh enough for `margin` after the refresh that
    /// tried to renew it, saying why: the new one was refused, the provider sent none (only when the ID token is the
    /// one held before, `previous`), or the new one is itself too short.
    private func requireValidIDToken(
        _ credential: StoredCredential, previous: StoredCredential, keeping token: IAPTokenInfo.Token, margin: Duration,
        now: Date
    ) throws {
        guard token == .idToken, credential.idToken != nil, let expiry = credential.idTokenExpiresAt,
            !TokenFreshness.isFresh(
                issuedAt: credential.idTokenIssuedAt, expiresAt: expiry, minimumValidity: margin, now: now)
        else { return }
        let left = Int(expiry.timeIntervalSince(now).rounded(.down))
        let state = left <= 0 ? "expired at \(expiry.ISO8601Format())" : "is valid for \(left) s only"
        let why: String
        if let refusal = credential.idTokenRefusal {
            // A new ID token that failed a check was refused: say so rather than that none came.
            why = "and \(refusal)"
        } else if credential.idToken == previous.idToken {
            why = "and the identity provider sent no new one with the refreshed tokens"
        } else {
            why = "though it is the new one the identity provider just sent"
        }
        throw CredentialError.signInRequired(
            target, because: "the ID token \(state), less than the \(Int(margin.timeInterval)) s asked for, \(why)")
    }

    /// Throws when the access token was asked for and the one a refresh (here or in another process) brought is not fresh
    /// enough to hand out: it expired when or before the answer came (`expires_in: 0`, a slow answer), or it is past
    /// half its lifetime (a 1-second token whose answer took 600 ms). A token in the first half of its lifetime is handed
    /// out even when it is shorter than `margin` or just past it (a 301-second token against 300 s), by the rule of
    /// `TokenFreshness`. The refreshed tokens are stored by then, with the new refresh token: only this access token is
    /// not handed out, and a refresh is tried again at the next call.
    private func requireFreshAccessToken(
        _ credential: StoredCredential, keeping token: IAPTokenInfo.Token, margin: Duration, now: Date
    ) throws {
        let (issued, expiry) = (credential.accessTokenIssuedAt, credential.accessTokenExpiresAt)
        guard token == .accessToken,
            !TokenFreshness.isFresh(issuedAt: issued, expiresAt: expiry, minimumValidity: margin, now: now),
            !TokenFreshness.isInFirstHalf(issuedAt: issued, expiresAt: expiry, now: now)
        else { return }
        let lifetime = issued.map { expiry.timeIntervalSince($0) } ?? 0
        throw CredentialError.unusableAccessToken(
            target, reason: Self.staleness(lifetime: lifetime, left: expiry.timeIntervalSince(now)))
    }

    /// What is wrong with an access token of `lifetime` seconds that has `left` seconds left, for a message.
    private static func staleness(lifetime: TimeInterval, left: TimeInterval) -> String {
        if lifetime <= 0 { return "expired as it was issued (a lifetime of \(seconds(lifetime)) s, expires_in)" }
        if left <= 0 { return "had expired when the answer came (a lifetime of \(seconds(lifetime)) s)" }
        return
            "had \(seconds(left)) s of its lifetime of \(seconds(lifetime)) s left when the answer came, less than half"
    }

    /// Seconds as people read them: whole above 10, else to the millisecond ("0.02", "1", "3600").
    private static func seconds(_ interval: TimeInterval) -> String {
        if abs(interval) >= 10 { return "\(Int(interval.rounded()))" }
        var text = String(format: "%.3f", interval)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    /// The provider's lifetime (whole seconds) of the token handed out for `token`, when it is shorter than
    /// `minimumValidity` and the caller has not been told so for this sign-in and lifetime; nil otherwise. Records that
    /// it was told, in the store entry when the credential is persisted (so another process, or the next call of a
    /// script, does not tell it again; a new sign-in starts afresh).
    ///
    /// Such a token is handed out under the rule of `TokenFreshness` (fresh in its first half); what the caller can
    /// change is the validity it asks for, or the lifetime the provider issues. An entry that cannot be written keeps
    /// the notice due: it is told again next time.
    package func firstShortLifetimeNotice(for token: IAPTokenInfo.Token, minimumValidity: Duration) async -> Int? {
        let record = current
        let name = token == .idToken ? "id_token" : "access_token"
        let lifetime =
            token == .idToken
            ? record.idTokenExpiresAt.flatMap {
                TokenFreshness.lifetime(issuedAt: record.idTokenIssuedAt, expiresAt: $0)
            }
            : TokenFreshness.lifetime(issuedAt: record.accessTokenIssuedAt, expiresAt: record.accessTokenExpiresAt)
        guard let lifetime, lifetime > 0, TimeInterval(lifetime) < minimumValidity.timeInterval,
            record.shortLifetimesNoted[name] != lifetime
        else { return nil }
        var first = true
        if let persistence {
            do {
                first = try await persistence.store.update { snapshot in
                    guard var entry = snapshot.entry(for: persistence.key) else { return false }
                    var noted = StoredCredential.shortLifetimes(entry["short_lifetime_noted"])
                    // Another process told it meanwhile.
                    if noted[name] == lifetime { return false }
                    noted[name] = lifetime
                    entry["short_lifetime_noted"] = StoredCredential.shortLifetimesJSON(noted)
                    snapshot.set(entry, for: persistence.key)
                    return true
                }
            } catch {
                return lifetime
            }
        }
        state.withLock { $0.shortLifetimesNoted[name] = lifetime }
        return first ? lifetime : nil
    }

    /// Whether an ArcGIS refresh token is old enough to be exchanged for a new one.
    ///
    /// The exchange interval is an age, as in `OAuthUserConfiguration` (and the ArcGIS Maps SDKs): a refresh
    /// token issued more than the interval ago is exchanged at the next use, so a sign-in used now and then
    /// never reaches its expiry. The age counts from when the token was issued; entries without that time
    /// count from the expiry minus the lifetime asked for. At most half the lifetime is waited, so an
    /// interval longer than a granted lifetime cannot let the token expire, nor make every call exchange.
    package static func needsExchange(_ credential: StoredCredential, now: Date) -> Bool {
        guard credential.kind == .oauthUser, credential.refreshToken != nil,
            let expiry = credential.refreshTokenExpiresAt, let interval = credential.refreshTokenExchangeSeconds,
            interval > 0
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
        margin: Duration, force: Bool, refused: String?, keeping token: IAPTokenInfo.Token = .accessToken,
        now: @escaping @Sendable () -> Date
    ) async throws -> StoredCredential {
        guard let persistence else {
            let current = self.current
            if let refusal = current.refreshTokenRefusal {
                throw CredentialError.refreshTokenRejected(target, detail: refusal)
            }
            if !(force && Self.isCurrent(refused, in: current))
                && !Self.needsRefresh(current, margin: margin, now: now(), keeping: token)
            {
                return current
            }
            do {
                let refreshed = try await refresh(current, now: now)
                state.withLock { $0 = refreshed }
                return refreshed
            } catch let refused as RotatedInRefusedAnswer {
                state.withLock { $0 = refused.rotated }
                throw refused.error
            } catch let error as CredentialError where error.isRefreshTokenRejection {
                state.withLock { $0.refreshTokenRefusal = error.detail }
                throw error
            }
        }
        let started = now()
        let seen = current.accessToken
        let unsaved = self.unsaved.withLock { $0 }
        let result: StoredCredential
        do {
            result = try await refreshLocked(
                persistence, margin: margin, force: force, refused: refused, keeping: token, started: started,
                seen: seen, unsaved: unsaved,
                now: now)
        } catch let error as CredentialStoreError where error.kind == .fileSystem {
            // Space was reserved before the request, so this is rare (an I/O error, a file system that
            // cannot reserve): the rotated tokens are still in memory, and the error says what to do.
            guard self.unsaved.withLock({ $0 }) != nil else { throw error }
            throw CredentialError.refreshedButNotStored(target, store: persistence.store.path, reason: "\(error)")
        }
        self.unsaved.withLock { $0 = nil }
        persistenceState.withLock { $0?.keyringMovePending = false }
        return result
    }

    /// The refresh under the store's lock, space for the new entry reserved before anything is sent.
    private func refreshLocked(
        _ persistence: Persistence, margin: Duration, force: Bool, refused: String?, keeping token: IAPTokenInfo.Token,
        started: Date, seen: String,
        unsaved: (spent: String, credential: StoredCredential)?, now: @escaping @Sendable () -> Date
    ) async throws -> StoredCredential {
        keyringDeferral.withLock { $0 = nil }
        // Rotated tokens the keyring cannot take once they came (locked or stopped meanwhile) stay in the store file.
        let deferring: (KeyringError) -> Void = { error in self.keyringDeferral.withLock { $0 = error.message } }
        let outcome: Result<StoredCredential, any Error> = try await persistence.store.withExclusiveAccess(
            reservingSpace: true, deferringKeyringFailure: deferring
        ) { snapshot in
            guard let entry = snapshot.entry(for: persistence.key), var stored = StoredCredential(json: .object(entry))
            else {
                throw CredentialError.notStored(self.target)
            }
            // Tokens this process refreshed earlier but could not store: the store still holds the refresh token
            // they replaced (spent, dead with a rotating provider), so they are the ones to keep and use.
            if let unsaved, stored.refreshToken == unsaved.spent {
                stored = unsaved.credential
                if case .object(let object) = stored.json { snapshot.set(object, for: persistence.key) }
            }
            // A refresh token the provider refused is not sent again, and its sign-in's tokens are not handed out:
            // only a new sign-in (an entry without the refusal) makes it usable, as `status` says.
            if let refusal = stored.refreshTokenRefusal {
                self.state.withLock { $0 = stored }
                return .failure(CredentialError.refreshTokenRejected(self.target, detail: refusal))
            }
            // Another process may have refreshed while this one waited for the lock: its token is as new
            // as a refresh from here would give, even when the server's tokens are shorter than the margin, or when
            // the ID token asked for did not come with it (stored times are whole seconds, hence the second of
            // slack) — provided its access token is still fresh (else it is refreshed again, by the same rule).
            let freshInStore = !Self.needsRefresh(stored, margin: margin, now: now())
            let refreshedMeanwhile =
                freshInStore && stored.accessToken != seen && stored.updatedAt >= started.addingTimeInterval(-1)
            // The refused token was replaced in the store (by another process): refreshing again would spend the
            // new refresh token for nothing.
            let force = force && Self.isCurrent(refused, in: stored)
            if refreshedMeanwhile || (!force && !Self.needsRefresh(stored, margin: margin, now: now(), keeping: token))
            {
                self.state.withLock { $0 = stored }
                return .success(stored)
            }
            // Never spend a refresh token whose successor cannot be stored: the keyring must answer, unlocked.
            try await persistence.store.checkSecretsWritable()
            var refreshed: StoredCredential
            do {
                refreshed = try await self.refresh(stored, now: now)
            } catch let error as CredentialError where error.isRefreshTokenRejection {
                // Recorded, so that `status` tells a refused refresh token from a valid one without a request.
                stored.refreshTokenRefusal = error.detail
                if case .object(let object) = stored.json { snapshot.set(object, for: persistence.key) }
                self.state.withLock { $0 = stored }
                return .failure(error)
            } catch let refused as RotatedInRefusedAnswer {
                // The answer was refused, but it replaced the refresh token: the new one is stored (the one sent is
                // spent, and a provider with reuse detection would end the sign-in if it came again).
                if case .object(let object) = refused.rotated.json { snapshot.set(object, for: persistence.key) }
                self.state.withLock { $0 = refused.rotated }
                if let spent = stored.refreshToken { self.unsaved.withLock { $0 = (spent, refused.rotated) } }
                return .failure(refused.error)
            }
            refreshed.refreshTokenRefusal = nil
            if case .object(let object) = refreshed.json { snapshot.set(object, for: persistence.key) }
            // Kept in memory before the store is written: should the write fail, this process still has the
            // rotated refresh token (see `unsaved`), and says so.
            self.state.withLock { $0 = refreshed }
            if let spent = stored.refreshToken, refreshed.refreshToken != spent {
                self.unsaved.withLock { $0 = (spent, refreshed) }
            }
            return .success(refreshed)
        }
        if case .failure(let error) = outcome {
            // What the closure recorded (a refusal, a rotated refresh token) is written.
            self.unsaved.withLock { $0 = nil }
            throw error
        }
        return try outcome.get()
    }

    /// One refresh (or exchange) against the token endpoint, retrying with backoff the failures that certainly
    /// left the refresh token unused (see ``wasNotProcessed(_:)``).
    ///
    /// - Throws: `CredentialError.refreshTokenRejected` at once when the provider refuses the refresh token;
    ///   `CredentialError.outcomeUnknown` at once when a request that may have reached the provider failed;
    ///   `CredentialError.unavailable` after the policy's attempts at an unreachable or busy provider;
    ///   other errors (TLS verification, an invalid answer) at once, as they are.
    private func refresh(_ credential: StoredCredential, now: @escaping @Sendable () -> Date) async throws
        -> StoredCredential
    {
        guard let refreshToken = credential.refreshToken else {
            throw CredentialError.signInRequired(
                target, because: "the access token expired and there is no refresh token")
        }
        let exchange = Self.needsExchange(credential, now: now())
        let request = TokenRequest(
            tokenURL: credential.tokenURL,
            grant: exchange
                ? .exchangeRefreshToken(refreshToken, redirectURI: credential.redirectURL.absoluteString)
                : .refreshToken(refreshToken),
            clientID: credential.clientID, scope: Self.refreshScope(credential))

        let pauses = policy.backoffs
        var lastError = ""
        for attempt in 0..<policy.attempts {
            // Expiry counts from the moment the request left: the answer's travel time is not validity.
            let sentAt = now()
            do {
                let response = try await send(request)
                let tokens = try Self.tokens(in: response, of: credential, now: sentAt)
                var known = credential
                var signatureProblem = await refreshedIDTokenSignatureProblem(
                    tokens.idToken, of: known, now: sentAt)
                // An entry of an earlier version, stored without the provider's keys: looked up once, then checked.
                if signatureProblem != nil, Self.needsProviderLookup(known) {
                    signatureProblem = await lookUpProvider(of: &known)
                    if signatureProblem == nil {
                        signatureProblem = await refreshedIDTokenSignatureProblem(
                            tokens.idToken, of: known, now: sentAt)
                    }
                }
                let refreshed = try known.updated(with: tokens, now: sentAt, idTokenProblem: signatureProblem)
                if let refusal = refreshed.idTokenRefusal, refusal != credential.idTokenRefusal {
                    logger.warning(
                        "kept the refreshed access and refresh tokens but refused the new ID token",
                        metadata: [
                            "target": "\(target)", "reason": "\(refusal)",
                        ])
                }
                return refreshed
            } catch let error as TokenEndpointError where error.kind == .refused {
                throw CredentialError.refreshTokenRejected(target, detail: Self.rejection(error))
            } catch  where Self.isTransient(error) {
                lastError = "\(error)"
                // A request that may have reached the provider is never sent again with the same refresh token:
                // a provider that rotates has already replaced it, and would take a second use for a stolen
                // token and end the sign-in. The stored sign-in stays as it was, and the error says so.
                guard Self.wasNotProcessed(error) else {
                    throw CredentialError.outcomeUnknown(target, reason: lastError)
                }
                if attempt < pauses.count { try await Task.sleep(for: pauses[attempt]) }
            }
        }
        throw CredentialError.unavailable(target, attempts: policy.attempts, lastError: lastError)
    }

    /// The tokens of a refresh answer, read by `TokenResponse.parse(_:endpoint:)`.
    ///
    /// - Throws: what `parse` throws; when it refuses the answer for another member (a malformed `expires_in`, an
    ///   access token that cannot be used) but the provider replaced the refresh token, `RotatedInRefusedAnswer` with
    ///   the new one, which is kept whatever else is refused.
    private static func tokens(in response: TransportResponse, of credential: StoredCredential, now: Date) throws
        -> TokenResponse
    {
        let parsed = Result { () throws(TokenEndpointError) in
            try TokenResponse.parse(response, endpoint: credential.tokenURL)
        }
        guard case .failure(let error) = parsed else { return try parsed.get() }
        guard error.kind == .invalidResponse, let issued = TokenResponse.issuedRefreshToken(in: response),
            issued.token != credential.refreshToken
        else { throw error }
        throw RotatedInRefusedAnswer(
            rotated: credential.keeping(refreshToken: issued.token, lifetime: issued.lifetime, now: now), error: error)
    }

    /// Looks up, once, the keys of the provider of an IAP entry written before they were recorded (no `jwks_uri`, no
    /// lookup recorded): its discovery document, found as at sign-in, gives them, and the entry keeps them (or that
    /// none were found) when it is stored. Returns the discovery's refusal (a document naming another issuer), which
    /// refuses the new ID token alone.
    private func lookUpProvider(of credential: inout StoredCredential) async -> (any Error)? {
        guard let authorizeURL = credential.authorizeURL else { return nil }
        credential.providerMetadataLookedUp = true
        do {
            let issuer = try await IssuerDiscovery.issuer(forAuthorizeURL: authorizeURL, httpClient: httpClient)
            if let metadata = issuer?.metadata {
                credential.jwksURI = metadata.jwksURI
                credential.signsIDTokensWithNone = metadata.signsWithNone
            }
            logger.notice(
                "looked up the identity provider's keys for a sign-in stored by an earlier version",
                metadata: [
                    "target": "\(target)",
                    "jwks_uri": "\(credential.jwksURI.map { RedactedURL($0).description } ?? "none found")",
                ])
            return nil
        } catch {
            return error
        }
    }

    /// Whether `credential` is an IAP entry written before the provider's keys were recorded, not looked up since.
    static func needsProviderLookup(_ credential: StoredCredential) -> Bool {
        credential.kind == .iap && credential.jwksURI == nil && !credential.providerMetadataLookedUp
            && credential.authorizeURL != nil
    }

    /// Why a refreshed ID token's signature does not verify against the provider's keys recorded at sign-in, or nil
    /// when it does or cannot be checked (no keys were known).
    private func refreshedIDTokenSignatureProblem(_ idToken: String?, of credential: StoredCredential, now: Date) async
        -> (any Error)?
    {
        guard let idToken, let decoded = try? IDToken(compact: idToken) else { return nil }
        do {
            try await IDTokenSignature.verify(
                decoded, jwksURI: credential.jwksURI, signsWithNone: credential.signsIDTokensWithNone,
                tokenURL: credential.tokenURL,
                httpClient: httpClient, now: now)
            return nil
        } catch {
            return error
        }
    }

    /// The `scope` of a refresh request, or nil to send none.
    ///
    /// RFC 6749 §6: an omitted `scope` means the scope originally granted, and a `scope` sent must not exceed it;
    /// so none is sent. Microsoft Entra ID is the exception: its v2.0 token endpoint requires `scope` on a refresh,
    /// with the names asked for at sign-in (its `.default` comes back expanded into other names in the response).
    static func refreshScope(_ credential: StoredCredential) -> String? {
        guard credential.kind == .iap, let authorizeURL = credential.authorizeURL,
            EntraAuthority.isEntraHost(authorizeURL)
        else { return nil }
        let asked = credential.requestedScopes ?? credential.scopes
        return asked.isEmpty ? nil : asked.joined(separator: " ")
    }

    /// One request, cut off after the policy's attempt timeout (by default as long as the transport's own limit:
    /// a slow answer is waited for rather than given up and asked again).
    ///
    /// A refresh request that has left cannot be taken back: a provider that rotates refresh tokens has
    /// already replaced the stored one when it answers. So the request is not cancelled with the caller
    /// (Ctrl-C, SIGTERM, SIGHUP): its answer is awaited, within the attempt timeout, and stored, and the
    /// cancellation takes effect after that — at the next pause or lock wait. Only SIGKILL can still lose such
    /// a sign-in. For the same reason the HTTP client's overall deadline (the tool's `--timeout`) only keeps a refresh
    /// from starting: once sent, its answer is awaited up to the attempt timeout, beyond that deadline if need be.
    private func send(_ request: TokenRequest) async throws -> TransportResponse {
        let client = httpClient
        let timeout = policy.attemptTimeout
        let url = RedactedURL(request.tokenURL)
        // libcurl keeps the time itself (`TransportRequest.timeLimit`): a `Task.sleep` timer would start Swift's
        // global pool (libdispatch's worker and timer threads) in a process that runs on its calling thread
        // (`CallerThreadExecutor`). A cast to the concrete type: one to a protocol would scan every conformance of
        // the binary on first use, as `Task.sleep` itself does.
        if client is CurlHTTPClient {
            let shielded = Task.keepingExecutor {
                try await request.send(with: client, outlastingDeadline: true, timeLimit: timeout)
            }
            return try await shielded.value
        }
        let shielded = Task.keepingExecutor {
            try await withDeadline(
                timeout,
                onTimeout: {
                    TransportError(.timedOut, url: url, detail: "no answer within \(timeout)")
                }
            ) {
                try await request.send(with: client, outlastingDeadline: true)
            }
        }
        return try await shielded.value
    }

    /// Whether trying again later may help: the provider was unreachable, slow or failing (5xx,
    /// `temporarily_unavailable`, 408, 429). A certificate that does not verify, a redirect or an answer
    /// that is not a token response will not change by retrying.
    static func isTransient(_ error: any Error) -> Bool {
        if let error = error as? TransportError {
            return [
                .cannotResolveHost, .cannotConnect, .timedOut, .connectionFailed, .invalidResponse, .transferFailed,
            ].contains(error.kind)
        }
        if let error = error as? TokenEndpointError {
            return error.kind == .serverFailure || [408, 429].contains(error.statusCode)
        }
        return false
    }

    /// Whether a failed request certainly did not use up the refresh token, so that sending it again is safe:
    /// nothing left this machine (the host did not resolve, the connection was refused or not made), or the
    /// provider said it did not process the request (408, 429, 503, `temporarily_unavailable`).
    ///
    /// Everything else may have reached the token endpoint: a time-out or broken connection after the request
    /// left, an answer that is not HTTP or cut short, a 500, or a gateway's 502/504.
    static func wasNotProcessed(_ error: any Error) -> Bool {
        if let error = error as? TransportError {
            return [.cannotResolveHost, .cannotConnect].contains(error.kind)
        }
        if let error = error as? TokenEndpointError {
            return [408, 429, 503].contains(error.statusCode) || error.errorCode == "temporarily_unavailable"
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
        let said = parts.isEmpty ? "HTTP \(error.statusCode)" : parts.joined(separator: ", ")
        // Microsoft Entra ID's AADSTS code names its own fix (an admin setting, or a new sign-in).
        return EntraErrorAdvice.advice(forDescription: error.errorDescription).map { "\(said) — \($0)" } ?? said
    }
}

/// A refresh answer refused (see `TokenResponse.parse`) that nonetheless replaced the refresh token: the credential with
/// the new refresh token and its other tokens as they were, to store, and the refusal, to throw once it is stored.
private struct RotatedInRefusedAnswer: Error {
    let rotated: StoredCredential
    let error: TokenEndpointError
}

// MARK: - Applying a token response

extension StoredCredential {
    /// This credential with `refreshToken`, which a refused answer issued (see `TokenResponse.issuedRefreshToken(in:)`),
    /// instead of the one sent; its access and ID tokens stay as they were.
    func keeping(refreshToken: String, lifetime: Duration?, now: Date) -> StoredCredential {
        var copy = self
        copy.refreshToken = refreshToken
        copy.refreshTokenIssuedAt = now
        copy.refreshTokenExpiresAt = lifetime.map { now.addingTimeInterval($0.timeInterval) }
        copy.updatedAt = now
        return copy
    }

    /// This credential after a token response: the new access token, the newest refresh token
    /// (the old one is kept only when none was sent), and the new ID token when one came.
    ///
    /// - Parameter idTokenProblem: why the response's ID token failed the signature check made before (it is then
    ///   refused like one that fails a claim check).
    func updated(with tokens: TokenResponse, now: Date, idTokenProblem: (any Error)? = nil) throws -> StoredCredential {
        var copy = self
        copy.accessToken = tokens.accessToken
        copy.accessTokenExpiresAt = now.addingTimeInterval((tokens.expiresIn ?? .seconds(3600)).timeInterval)
        copy.accessTokenIssuedAt = now
        if let refreshToken = tokens.refreshToken, refreshToken != self.refreshToken {
            copy.refreshToken = refreshToken
            copy.refreshTokenIssuedAt = now
            copy.refreshTokenExpiresAt = tokens.refreshTokenExpiresIn.map { now.addingTimeInterval($0.timeInterval) }
        } else if let lifetime = tokens.refreshTokenExpiresIn {
            copy.refreshTokenExpiresAt = now.addingTimeInterval(lifetime.timeInterval)
        }
        if let idToken = tokens.idToken {
            // A refreshed ID token that fails a check is refused alone: the answer's access and refresh tokens
            // are kept (with a rotating provider the old refresh token is already dead), the previous ID token
            // stays as it was, and the refusal is recorded for the caller to see.
            do {
                let decoded = try IDToken(compact: idToken)
                let previous = self.idToken.flatMap { try? IDToken(compact: $0) }
                try decoded.validate(clientID: clientID, nonce: nil, expectedIssuer: previous?.issuer, now: now)
                // OIDC Core 12.2: the same iss, sub and aud as the sign-in's (issue 25.6: no identity switch).
                if let previous { try decoded.requireSameSignIn(as: previous) }
                if let idTokenProblem { throw idTokenProblem }
                copy.idToken = idToken
                copy.idTokenExpiresAt = decoded.expirationDate
                copy.idTokenIssuedAt = now
                copy.idTokenRefusal = nil
            } catch {
                // The check's message may quote the provider's claims (each quote bounded where it is made): no
                // control characters; the whole kept, as a cut sentence ended on nothing (issue 45: "… give ;").
                let reason = DisplayText.neutralised("\(error)", limit: 2000)
                copy.idTokenRefusal =
                    "the ID token sent with the refresh at \(now.ISO8601Format()) was refused: \(reason)"
            }
        }
        if let scopes = tokens.scopes { copy.scopes = scopes }
        if let ssl = tokens.isSSLRequired { copy.isSSLRequired = ssl }
        if let username = tokens.username { copy.username = username }
        copy.tokenType = tokens.tokenType
        copy.updatedAt = now
        return copy
    }
}
