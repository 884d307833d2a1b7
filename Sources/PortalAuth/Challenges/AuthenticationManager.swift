import Foundation
import Logging
import PortalAuthCore
import PortalAuthStore
import Synchronization

/// Holds an app's ArcGIS and network credentials, sends requests with them while answering the servers'
/// authentication challenges (`data(for:)`), and signs the user out of all of them.
///
/// ```swift
/// let manager = AuthenticationManager()
/// manager.handleChallenges(using: authenticator)
/// let response = try await manager.data(for: .get(URL(string: "https://www.arcgis.com/sharing/rest/portals/self?f=json")!))
/// ```
///
/// The credential store is in memory unless made persistent, in which case sign-ins survive the process:
///
/// ```swift
/// let manager = AuthenticationManager()
/// try await manager.setupPersistentCredentialStorage()
/// let credential = try await OAuthUserCredential.credential(for: configuration)
/// manager.arcGISCredentialStore.add(credential)   // in memory at once, the file follows
/// ```
///
/// The hosts behind an Identity-Aware Proxy are known from the IAP credentials in the ArcGIS store and from the
/// configurations registered with the manager (`iapConfigurations`); a handler declares none:
///
/// ```swift
/// manager.iapConfigurations = [try await .configuration(from: URL(filePath: "iap.json"))]
/// ```
///
/// During sign-out revoke the OAuth tokens, end the IAP sessions, then clear the stores — `signOut()` does all three:
///
/// ```swift
/// // Revokes OAuth refresh and access tokens.
/// await manager.revokeOAuthTokens()
/// // Ends the identity-provider sessions of IAP credentials (opens the browser on each logout page).
/// await manager.invalidateIAPCredentials()
/// // Clears all credentials from the store, and from its file.
/// await manager.clearCredentialStores()
/// ```
public final class AuthenticationManager: Sendable {
    private struct State: Sendable {
        var arcGISCredentialStore: ArcGISCredentialStore
        var networkCredentialStore: NetworkCredentialStore
        var settings: SignInSettings
        var arcGISHandler: (any ArcGISAuthenticationChallengeHandler)?
        var networkHandler: (any NetworkAuthenticationChallengeHandler)?
        var tokenPlacement: ArcGISTokenPlacement = .header
        var iapConfigurations: [IAPConfiguration] = []
        var tokenAgent: TokenAgent?
    }

    private let state: Mutex<State>
    /// Lets one challenge at a time reach the handlers.
    let challengeQueue = ChallengeQueue()

    /// A manager with in-memory stores (by default) and default settings.
    public init(
        arcGISCredentialStore: ArcGISCredentialStore = ArcGISCredentialStore(),
        networkCredentialStore: NetworkCredentialStore = NetworkCredentialStore(),
        settings: SignInSettings = SignInSettings()
    ) {
        state = Mutex(
            State(
                arcGISCredentialStore: arcGISCredentialStore, networkCredentialStore: networkCredentialStore,
                settings: settings))
    }

    // MARK: - Credential stores

    /// The store of ArcGIS credentials (OAuth user, IAP, token, application credentials); in memory until replaced.
    public var arcGISCredentialStore: ArcGISCredentialStore {
        get { state.withLock { $0.arcGISCredentialStore } }
        set { state.withLock { $0.arcGISCredentialStore = newValue } }
    }

    /// The store of network credentials (passwords, client certificates, server trusts), per host and port; in
    /// memory only (see `NetworkCredentialStore`).
    public var networkCredentialStore: NetworkCredentialStore {
        get { state.withLock { $0.networkCredentialStore } }
        set { state.withLock { $0.networkCredentialStore = newValue } }
    }

    /// Replaces the network credential store (the SDK's spelling of setting `networkCredentialStore`).
    public func setNetworkCredentialStore(_ store: NetworkCredentialStore) async {
        networkCredentialStore = store
    }

    /// The browser, time limit and observer of IAP logouts, the HTTP client of `data(for:)`, and the HTTP
    /// client and refresh policy of credentials loaded by `setupPersistentCredentialStorage()`.
    public var settings: SignInSettings {
        get { state.withLock { $0.settings } }
        set { state.withLock { $0.settings = newValue } }
    }

    /// Replaces the ArcGIS credential store with one persisted in the store file (`$PORTAL_AUTH_STORE`, else the
    /// XDG state directory), loaded now: credentials signed in earlier are available at once.
    ///
    /// ```swift
    /// try await manager.setupPersistentCredentialStorage()
    /// ```
    ///
    /// - Throws: a store error (a `CategorizedError`) for unsafe permissions, a corrupted or newer-format file; the store is
    ///   then left as it was.
    public func setupPersistentCredentialStorage() async throws {
        try await setupPersistentCredentialStorage(file: nil)
    }

    /// `setupPersistentCredentialStorage()` with the store in `file` (`nil`: the default one).
    package func setupPersistentCredentialStorage(file: CredentialStoreFile?) async throws {
        let store = try ArcGISCredentialStore.makePersistent(file: file, settings: settings)
        arcGISCredentialStore = store
    }

    /// The toolkit's form: persistent credential stores, with the ArcGIS Maps SDK's labels.
    ///
    /// Both stores keep their secrets in one place, chosen as the tool's automatic store chooses it
    /// (`$PORTAL_AUTH_STORE` may name it): the desktop keyring when a Secret Service answers and its default
    /// collection is unlocked (with the credential store file as its index), else — a headless machine, a container,
    /// no D-Bus session, a locked keyring — private files (0600 in a 0700 folder): the credential store file
    /// (`$XDG_STATE_HOME/portal-auth/credentials.json`) and `credentials-network.json` beside it. Either way sign-ins
    /// come back in the next session. Which place was chosen, and why, is in the stores' `storageLocation` and in a
    /// `notice` record on the settings' `Logger`:
    ///
    /// ```swift
    /// try await manager.setupPersistentCredentialStorage(access: .whenUnlocked)
    /// print(manager.arcGISCredentialStore.storageLocation)   // the desktop keyring, or the private file and why
    /// ```
    ///
    /// An app that accepts the keyring only says so with
    /// ``setupPersistentCredentialStorage(access:synchronizesWithiCloud:requiringKeyring:)``. `access` and
    /// `synchronizesWithiCloud` have no Linux meaning (see `KeychainAccess`).
    ///
    /// As in the toolkit, either both stores are replaced or neither: when the network credential store cannot be
    /// made persistent, the ArcGIS credential store is put back as it was and the error is thrown.
    ///
    /// - Throws: a store error (a `CategorizedError`) for a store file that cannot be used (unsafe permissions, a corrupted or
    ///   newer-format file, a keyring forced by `$PORTAL_AUTH_STORE` that is absent); a keyring error (a `CategorizedError`) when the chosen
    ///   keyring's items cannot be read. Both stores are then left as they were.
    public func setupPersistentCredentialStorage(access: KeychainAccess, synchronizesWithiCloud: Bool = false)
        async throws
    {
        try await setupPersistentCredentialStorage(
            access: access, synchronizesWithiCloud: synchronizesWithiCloud, requiringKeyring: false)
    }

    /// ``setupPersistentCredentialStorage(access:synchronizesWithiCloud:)``, in the desktop keyring only when
    /// `requiringKeyring` is true: where no usable keyring answers it then throws, both stores stay as they were, and
    /// no secret is written to a file.
    ///
    /// ```swift
    /// do {
    ///     try await manager.setupPersistentCredentialStorage(access: .whenUnlocked, requiringKeyring: true)
    /// } catch {
    ///     // No keyring: the stores are still in memory; tell the user, or call it again without requiringKeyring.
    /// }
    /// ```
    ///
    /// - Throws: as ``setupPersistentCredentialStorage(access:synchronizesWithiCloud:)``, and with
    ///   `requiringKeyring` a keyring error (a `CategorizedError`) when no usable desktop keyring answers (`noLibrary`, `noSessionBus`,
    ///   `noService`, `locked`, `timedOut`).
    public func setupPersistentCredentialStorage(
        access: KeychainAccess, synchronizesWithiCloud: Bool = false, requiringKeyring: Bool
    ) async throws {
        try await setupPersistentCredentialStorage(
            requiringKeyring: requiringKeyring, environment: ProcessInfo.processInfo.environment,
            storage: SecretServiceClient())
    }

    /// ``setupPersistentCredentialStorage(access:synchronizesWithiCloud:requiringKeyring:)`` in `scope`: the app's
    /// own stores (``CredentialStoreScope/app(_:)``), or the ones it shares with `portal-auth`
    /// (``CredentialStoreScope/shared``, the default of the other forms: a sign-in made with `portal-auth login`
    /// serves the app, and the app's `signOut()` revokes and removes only the sign-ins it added).
    ///
    /// ```swift
    /// try await manager.setupPersistentCredentialStorage(access: .whenUnlocked, scope: .app("com.example.viewer"))
    /// ```
    ///
    /// - Throws: as ``setupPersistentCredentialStorage(access:synchronizesWithiCloud:requiringKeyring:)``, and
    ///   ``CredentialStoreScope/InvalidIdentifier`` for an app identifier that cannot name a store.
    public func setupPersistentCredentialStorage(
        access: KeychainAccess, synchronizesWithiCloud: Bool = false, requiringKeyring: Bool = false,
        scope: CredentialStoreScope
    ) async throws {
        try await setupPersistentCredentialStorage(
            requiringKeyring: requiringKeyring, environment: ProcessInfo.processInfo.environment,
            storage: SecretServiceClient(), scope: scope)
    }

    /// ``setupPersistentCredentialStorage(access:synchronizesWithiCloud:requiringKeyring:)`` with the environment
    /// that chooses the store and the keyring's items given (tests).
    package func setupPersistentCredentialStorage(
        requiringKeyring: Bool, environment: [String: String], storage: any SecretItemStorage,
        scope: CredentialStoreScope = .shared
    ) async throws {
        let settings = self.settings
        let previousArcGISCredentialStore = arcGISCredentialStore
        do {
            let file = try await BlockingWork.run {
                try CredentialStoreFile.forPersistentStores(
                    scope: scope, requiringKeyring: requiringKeyring, environment: environment, storage: storage)
            }
            // The manager's settings (HTTP client, refresh policy) for the loaded credentials, as the file form.
            arcGISCredentialStore = try await BlockingWork.run {
                try ArcGISCredentialStore.makePersistent(file: file, settings: settings, owner: scope.owner)
            }
            let network = try await NetworkCredentialStore.load(
                beside: file, storage: storage, requiringKeyring: requiringKeyring, environment: environment,
                logger: settings.logger, scope: scope)
            await setNetworkCredentialStore(network)
            settings.logger.notice(
                "persistent credential storage set up",
                metadata: [
                    "arcGISCredentials": "\(arcGISCredentialStore.storageLocation)",
                    "networkCredentials": "\(network.storageLocation)",
                ])
        } catch {
            arcGISCredentialStore = previousArcGISCredentialStore
            settings.logger.error(
                "persistent credential storage could not be set up; the stores are as they were",
                metadata: ["error": "\(error)"])
            throw error
        }
    }

    // MARK: - Challenge handling

    /// Answers the ArcGIS challenges (OAuth, token, IAP) of `data(for:)`; without one they fail with their error.
    public var arcGISAuthenticationChallengeHandler: (any ArcGISAuthenticationChallengeHandler)? {
        get { state.withLock { $0.arcGISHandler } }
        set { state.withLock { $0.arcGISHandler = newValue } }
    }

    /// Answers the network challenges (HTTP passwords, client certificates, untrusted servers) of `data(for:)`;
    /// without one they fail with their error.
    public var networkAuthenticationChallengeHandler: (any NetworkAuthenticationChallengeHandler)? {
        get { state.withLock { $0.networkHandler } }
        set { state.withLock { $0.networkHandler = newValue } }
    }

    /// Makes `handler` answer both kinds of challenge, as the toolkit's `Authenticator` is installed; `nil` removes
    /// both handlers (as the samples do when they end):
    ///
    /// ```swift
    /// ArcGISEnvironment.authenticationManager.handleChallenges(using: Authenticator(prompt: myPrompt))
    /// ArcGISEnvironment.authenticationManager.handleChallenges(using: nil)
    /// ```
    public func handleChallenges(
        using handler: (any ArcGISAuthenticationChallengeHandler & NetworkAuthenticationChallengeHandler)?
    ) {
        state.withLock {
            $0.arcGISHandler = handler
            $0.networkHandler = handler
        }
    }

    /// The Identity-Aware Proxy configurations registered with the manager: `data(for:)` treats the hosts their
    /// `hostsBehindProxy` cover as behind a proxy, so that such a host's answers that ask for a sign-in (a 401, a
    /// redirect elsewhere, a page that posts itself to the identity provider) raise an `.iap` challenge.
    ///
    /// Empty by default. The hosts of the IAP credentials in `arcGISCredentialStore` are known without it, and
    /// so are the `iapConfigurations` of an `Authenticator` installed as the ArcGIS handler. A handler written
    /// for the ArcGIS Maps SDK declares no configurations to the manager (the SDK's protocol has no such
    /// requirement): register its configurations here, as an app sets up its handler.
    ///
    /// ```swift
    /// let iap = try await IAPConfiguration.configuration(from: URL(filePath: "iap.json"))
    /// manager.arcGISAuthenticationChallengeHandler = myHandler      // answers `.iap` with IAPCredential.credential(for: iap)
    /// manager.iapConfigurations.append(iap)
    /// ```
    ///
    /// Without any known configuration a proxy's sign-in request is still recognised when it redirects to an
    /// OAuth/OpenID Connect authorization request, or answers 401 to a request that carried a bearer token.
    public var iapConfigurations: [IAPConfiguration] {
        get { state.withLock { $0.iapConfigurations } }
        set { state.withLock { $0.iapConfigurations = newValue } }
    }

    /// A `portal-auth` agent that `data(for:)` asks for the token of a URL that no credential of
    /// `arcGISCredentialStore` covers; nil (the default) asks none. For an app that cannot read the credential store
    /// itself (a sandbox): the agent reads it and refreshes, and hands out only the tokens (see ``TokenAgent``).
    ///
    /// ```swift
    /// manager.tokenAgent = TokenAgent.environmentDefault
    /// ```
    ///
    /// The token is asked for with `settings.refreshPolicy.margin` of validity, and goes where a stored
    /// credential's would: an ArcGIS token as `X-Esri-Authorization`, an Identity-Aware Proxy's as `Authorization`,
    /// only over `https` (or `http` to a loopback host). A URL the agent holds no sign-in for is sent without a
    /// token, so that the server's challenge reaches the challenge handler; an agent that is not running fails the
    /// request with `TokenAgentError`. An ArcGIS token the server refuses (498) is asked for once more with more
    /// validity than it had left, so that the agent refreshes it while it is still the sign-in's current token (one
    /// renewal per expiry however many requests saw it refused). So is a token a proxy refuses (401 or 403) when its
    /// `issueDate` is a minute old or more, as for a stored IAP credential; a younger one (or one of unknown age) is
    /// `.iapTokenRefused` at once.
    public var tokenAgent: TokenAgent? {
        get { state.withLock { $0.tokenAgent } }
        set { state.withLock { $0.tokenAgent = newValue } }
    }

    /// Whether `data(for:)` asks `tokenAgent` for `request`'s token before it sends anything, when no credential
    /// covers the URL: unless the request carries a token of its own (`X-Esri-Authorization`, `token=`, or
    /// `Authorization`).
    package static func asksTokenAgentFirst(for request: TransportRequest) -> Bool {
        !AuthenticatedRequest.carriesArcGISToken(request) && !request.headers.contains("Authorization")
    }

    /// Where `data(for:)` puts ArcGIS tokens: the `X-Esri-Authorization` header by default.
    package var arcGISTokenPlacement: ArcGISTokenPlacement {
        get { state.withLock { $0.tokenPlacement } }
        set { state.withLock { $0.tokenPlacement = newValue } }
    }

    // MARK: - Sign-out

    /// Revokes the tokens of every OAuth user credential in the store, concurrently.
    ///
    /// The credentials are unusable afterwards but stay in the store: clear it with `clearCredentialStores()`.
    ///
    /// - Returns: `true` when every revocation succeeded (also when there was none).
    @discardableResult
    public func revokeOAuthTokens() async -> Bool {
        await revokeEachOAuthCredential().allSatisfy(\.outcome.succeeded)
    }

    /// Logs every IAP credential in the store out of its identity provider, concurrently (each provider session in
    /// a browser tab, confirmed on its own loopback port; those sharing a fixed port one after another), with the
    /// manager's `settings`. Sign-ins of one provider session (the same `sid`, or subject, at the same logout
    /// endpoint) get one browser logout, whose confirmation they share.
    ///
    /// The credentials are unusable afterwards but stay in the store: clear it with `clearCredentialStores()`.
    ///
    /// - Returns: `true` when every identity provider confirmed its logout and no advertised revocation failed
    ///   (also when there was none).
    @discardableResult
    public func invalidateIAPCredentials() async -> Bool {
        await invalidateEachIAPCredential().allSatisfy(\.succeeded)
    }

    /// Removes every credential from both stores, and every entry from the ArcGIS store's file when it is
    /// persistent.
    ///
    /// As in the toolkit, the stores in memory are always emptied. When the file (or keyring) cannot be written, the
    /// failure is logged (`error`, the settings' `Logger`), and the entries left there are made unusable for this
    /// process; `clearCredentialStoresReportingError()` returns the error, `signOutReport().clearingError` too.
    public func clearCredentialStores() async {
        _ = await clearCredentialStoresReportingError()
    }

    /// `clearCredentialStores()`, returning the error of the file or keyring that could not be emptied (nil when it
    /// was, or the store is in memory). The stores in memory are emptied either way.
    @discardableResult
    public func clearCredentialStoresReportingError() async -> (any Error)? {
        await clearReportingError()
    }

    /// Signs out of everything, as the toolkit's `signOut()`: revokes the OAuth tokens, logs the IAP credentials out,
    /// clears the stores — in that order, each step whatever the previous one gave. The stores in memory are empty
    /// afterwards; use `signOutReport()` to learn what each step did.
    ///
    /// Every IAP sign-in has its refresh token revoked where its identity provider advertises a revocation endpoint,
    /// with or without a browser; its browser session is ended where a browser can be used (`settings`). What stays
    /// valid — a refresh token that was not revoked, a browser session no browser could end, the last access token
    /// until it expires — is logged as a `notice` for each sign-in (the settings' `Logger`) and reported by
    /// `signOutReport()` (`SignOutReport.Entry.logoutResult`).
    ///
    /// ```swift
    /// await ArcGISEnvironment.authenticationManager.signOut()
    /// ```
    public func signOut() async {
        _ = await signOutReport()
    }

    /// `signOut()`, returning what happened to each credential.
    ///
    /// ```swift
    /// let report = await manager.signOutReport()
    /// for entry in report.revocations where !entry.outcome.succeeded {
    ///     print("Not revoked: \(entry.credential.targetDescription)")
    /// }
    /// ```
    ///
    /// - Returns: the revocations, the logouts, and the error of a store file that could not be emptied
    ///   (`clearingError`); the stores in memory are emptied even when a step failed.
    @discardableResult
    public func signOutReport() async -> SignOutReport {
        let revocations = await revokeEachOAuthCredential()
        let invalidations = await invalidateEachIAPCredential()
        for entry in revocations + invalidations {
            guard let left = entry.leftValid(now: settings.clock.now) else { continue }
            settings.logger.notice(
                "signed out, but not everything ended",
                metadata: ["credential": "\(entry.credential.targetDescription)", "still_valid": "\(left)"])
        }
        let clearingError = await clearReportingError()
        return SignOutReport(revocations: revocations, invalidations: invalidations, clearingError: clearingError)
    }

    // MARK: - Steps

    private func revokeEachOAuthCredential() async -> [SignOutReport.Entry] {
        // In a store shared with the tool, only the sign-ins this app added (the others stay valid, see
        // `CredentialStoreScope`).
        let store = arcGISCredentialStore
        let credentials = store.credentials.filter(store.mayRemove).compactMap(\.kind.oAuthUser)
        return await Self.concurrently(credentials) { credential in
            do {
                try await credential.revokeToken()
                return .revoked
            } catch {
                return .revocationFailed(error)
            }
        }
    }

    /// Logs the IAP credentials out: one browser logout per identity-provider session (see `IAPSessionLogouts`),
    /// those whose redirect URL has the same fixed port one after another (each logout listens on that port).
    private func invalidateEachIAPCredential() async -> [SignOutReport.Entry] {
        let store = arcGISCredentialStore
        return await IAPSessionLogouts.run(
            store.credentials.filter(store.mayRemove).compactMap(\.kind.iap), settings: settings)
    }

    private func clearReportingError() async -> (any Error)? {
        await networkCredentialStore.removeAll()
        let store = arcGISCredentialStore
        let held = store.credentials
        do {
            try await store.removeAllAndPersist()
            return nil
        } catch {
            settings.logger.error("the credential store could not be cleared", metadata: ["error": "\(error)"])
            // The entries stay in the file: this process must not refresh or send them again.
            for credential in held {
                credential.kind.tokenKeeping?.keeper.invalidate()
            }
            store.removeAllInMemory()
            return error
        }
    }

    /// Runs `body` for every credential in a task group; the entries come back in the credentials' order.
    private static func concurrently<Credential: ArcGISCredential>(
        _ credentials: [Credential], _ body: @escaping @Sendable (Credential) async -> SignOutReport.Outcome
    ) async -> [SignOutReport.Entry] {
        await withTaskGroup(of: (Int, SignOutReport.Outcome).self) { group in
            for (index, credential) in credentials.enumerated() {
                group.addTask { (index, await body(credential)) }
            }
            var outcomes = [SignOutReport.Outcome?](repeating: nil, count: credentials.count)
            for await (index, outcome) in group { outcomes[index] = outcome }
            return zip(credentials, outcomes).map { SignOutReport.Entry(credential: $0, outcome: $1!) }
        }
    }
}

/// The process-wide settings of the ArcGIS Maps SDK that concern authentication: the shared
/// `AuthenticationManager` every page and sample of the SDK uses, and the API key.
///
/// ```swift
/// ArcGISEnvironment.authenticationManager.handleChallenges(using: authenticator)
/// let response = try await ArcGISEnvironment.authenticationManager.data(for: .get(url))
/// ```
///
/// The manager starts with in-memory stores; `setupPersistentCredentialStorage()` makes the ArcGIS one persistent.
public enum ArcGISEnvironment {
    /// The manager shared by the whole process.
    public static let authenticationManager = AuthenticationManager()

    private static let key = Mutex<APIKey?>(nil)

    /// The API key access token sent with requests that no stored credential covers (see
    /// `AuthenticationManager.data(for:)`); nil (the default) sends none.
    public static var apiKey: APIKey? {
        get { key.withLock { $0 } }
        set { key.withLock { $0 = newValue } }
    }
}

/// Where `AuthenticationManager.data(for:)` puts an ArcGIS token.
package enum ArcGISTokenPlacement: Sendable, Hashable {
    /// `X-Esri-Authorization: Bearer …` (the default): never in a URL, so never in server logs, and not in
    /// the way of the `Authorization` field an Identity-Aware Proxy or web-tier authentication uses.
    case header
    /// `token=…` in the query of a GET, or in the form body of a `application/x-www-form-urlencoded` POST
    /// (other requests get the header): for servers older than ArcGIS Enterprise 10.x that read no header.
    case parameter
}
