import Foundation
import PortalAuth

/// The stored credential a `CredentialSelection` picked, and what the tool does with it.
enum SelectedCredential: Sendable {
    case portal(OAuthUserCredential)
    case iap(IAPCredential, configurationFile: String?)

    // MARK: - Finding

    /// The credential the selection names in `store`, or nil when none is stored (`SignInSelection` decides).
    /// An IAP configuration file that now names another provider or client than its stored sign-in is a sign-in
    /// needed (`SignInNeeded`, exit 77): what differs, and the command that signs in with the file (with
    /// `--store storeOption` when one was given).
    static func find(_ target: CredentialSelection.Target, in store: ArcGISCredentialStore, storeOption: String? = nil)
        async throws -> SelectedCredential?
    {
        let found: ArcGISCredential?
        do {
            let preferences = try Self.preferences(for: target, in: store)
            found = try await SignInSelection.select(target, in: store, preferences: preferences)
        } catch let error as SelectionError {
            guard let change = error.configurationChange else { throw error }
            let storeWords = storeOption.map { ["--store", $0] } ?? []
            throw SignInNeeded(
                reason:
                    "the IAP configuration \(DisplayText.path(change.file)) has changed since the sign-in stored for it: "
                    + change.differences.joined(separator: "; ") + "; the stored tokens belong to the old registration",
                command: ShellWord.command(["portal-auth", "iap", "login", "--config", change.file] + storeWords))
        }
        switch found?.kind {
        case .oAuthUser(let credential): return .portal(credential)
        case .iap(let credential):
            if case .iap(let file) = target { return .iap(credential, configurationFile: file.path) }
            return .iap(credential, configurationFile: credential.configuration.sourceFile?.path)
        case .token, .oAuthApplication, .pregeneratedToken, nil: return nil
        }
    }

    /// The preferences `target` is chosen by: a name or the default (and the names that describe the sign-ins
    /// when several could be meant); none for a portal, IAP file or URL, so `token --portal …` does not read
    /// the preferences file.
    private static func preferences(for target: CredentialSelection.Target, in store: ArcGISCredentialStore) throws
        -> SignInPreferences
    {
        switch target {
        case .name, .automatic: return try store.preferences()
        case .portal, .iap, .url: return SignInPreferences()
        }
    }

    // MARK: - Describing

    /// The library's credential.
    var credential: ArcGISCredential {
        switch self {
        case .portal(let credential): return credential
        case .iap(let credential, _): return credential
        }
    }

    /// "the portal https://…" or "the IAP configuration /path/file.json".
    var target: String {
        switch self {
        case .portal(let credential): return credential.targetDescription
        case .iap(let credential, _): return credential.targetDescription
        }
    }

    /// `.oauthUser` or `.iap`: the library's kind of the credential (`status` shows its raw value).
    var kind: CredentialKind { credential.kind.credentialKind }

    /// The signed-in user, when known.
    var username: String? {
        switch self {
        case .portal(let credential): return credential.username
        case .iap(let credential, _): return credential.username
        }
    }

    /// The command that signs in to this credential again, with `--store` when one was given.
    func signInCommand(store: String?) -> String {
        Self.signInCommand(for: self, store: store)
    }

    /// The sign-in command for a selection with nothing stored; nil when it cannot be told (`--url`, `--name` or
    /// no selection matching nothing; a portal whose app's client ID was never seen here).
    static func signInCommand(for target: CredentialSelection.Target, store: String?, preferences: SignInPreferences)
        -> String?
    {
        let storeWords = store.map { ["--store", $0] } ?? []
        switch target {
        case .portal(let url, let clientID):
            guard
                let app = preferences.app(for: url, clientID: clientID)
                    ?? clientID.map({ .init(portalURL: url, clientID: $0, redirectURL: nil) })
            else { return nil }
            var words = ["portal-auth", "login", "--portal", url.absoluteString, "--client-id", app.clientID]
            if let redirect = app.redirectURL, redirect != OAuthUserConfiguration.defaultRedirectURL {
                words += ["--redirect-url", redirect.absoluteString]
            }
            return ShellWord.command(words + storeWords)
        case .iap(let file):
            return ShellWord.command(["portal-auth", "iap", "login", "--config", file.path] + storeWords)
        case .url, .name, .automatic:
            return nil
        }
    }

    private static func signInCommand(for credential: SelectedCredential, store: String?) -> String {
        let storeWords = store.map { ["--store", $0] } ?? []
        switch credential {
        case .portal(let credential):
            let configuration = credential.configuration
            var words = [
                "portal-auth", "login", "--portal", configuration.portalURL.absoluteString, "--client-id",
                configuration.clientID,
            ]
            if configuration.redirectURL != OAuthUserConfiguration.defaultRedirectURL {
                words += ["--redirect-url", configuration.redirectURL.absoluteString]
            }
            return ShellWord.command(words + storeWords)
        case .iap(let credential, let file):
            let path = file ?? credential.configuration.sourceFile?.path ?? "FILE"
            return ShellWord.command(["portal-auth", "iap", "login", "--config", path] + storeWords)
        }
    }

    // MARK: - Tokens

    /// Says that refreshed tokens went to the store file because the keyring could not take them.
    private static func warnAboutKeyringFallback(_ reason: String?) {
        guard let reason else { return }
        StandardError.line(
            "portal-auth: warning: the desktop keyring could not take the refreshed tokens (\(DisplayText.neutralised(reason, limit: 400))); "
                + "they are kept in the store file (0600) and move into the keyring the next time it is used while it answers"
        )
    }

    /// Whether `token(minimumValidity:force:idToken:)` without `force` hands out the token held as it is, with no
    /// refresh and no store write.
    func holdsFreshToken(minimumValidity: Duration, idToken: Bool) -> Bool {
        switch self {
        case .portal(let credential): return credential.holdsFreshToken(minimumValidity: minimumValidity)
        case .iap(let credential, _):
            return credential.holdsFreshToken(
                minimumValidity: minimumValidity, keeping: idToken ? .idToken : .accessToken)
        }
    }

    /// A token valid for at least `minimumValidity`, as the library hands it out (it decides whether to refresh;
    /// `force` asks for a refresh whatever the expiry).
    ///
    /// - Parameter idToken: hand out the IAP credential's ID token instead of its access token (the library keeps
    ///   that one valid, and asks for a new sign-in when the provider sends none on refresh).
    func token(minimumValidity: Duration, force: Bool, idToken: Bool) async throws -> IssuedToken {
        switch self {
        case .portal(let credential):
            let info = try await credential.tokenInfo(minimumValidity: minimumValidity, forceRefresh: force)
            Self.warnAboutKeyringFallback(credential.keyringFallback)
            return IssuedToken(
                kind: kind, target: target, url: credential.configuration.portalURL,
                clientID: credential.configuration.clientID,
                configurationFile: nil, username: credential.username, value: info.accessToken, type: "Bearer",
                expirationDate: info.expirationDate, idToken: nil, idTokenExpirationDate: nil, isIDToken: false,
                issuedAt: credential.tokensIssuedAt)
        case .iap(let credential, let file):
            let info = try await credential.tokenInfo(
                minimumValidity: minimumValidity, forceRefresh: force, keeping: idToken ? .idToken : .accessToken)
            let type = info.tokenType.lowercased() == "bearer" ? "Bearer" : info.tokenType
            Self.warnAboutKeyringFallback(credential.keyringFallback)
            if let refusal = credential.idTokenRefusal {
                // The refresh kept the access and refresh tokens; only the new ID token was refused.
                StandardError.line(
                    "portal-auth: warning: \(refusal); the new access and refresh tokens were kept, "
                        + "the ID token is still the one accepted before.")
            }
            if idToken {
                guard let value = info.idToken, let expiry = info.idTokenExpirationDate else {
                    throw NoIDToken(target: target)
                }
                return IssuedToken(
                    kind: kind, target: target, url: credential.configuration.authorizeURL,
                    clientID: credential.configuration.clientID,
                    configurationFile: file, username: credential.username, value: value, type: "ID",
                    expirationDate: expiry, idToken: value, idTokenExpirationDate: expiry, isIDToken: true,
                    issuedAt: credential.tokensIssuedAt)
            }
            return IssuedToken(
                kind: kind, target: target, url: credential.configuration.authorizeURL,
                clientID: credential.configuration.clientID,
                configurationFile: file, username: credential.username, value: info.accessToken, type: type,
                expirationDate: info.accessTokenExpirationDate, idToken: info.idToken,
                idTokenExpirationDate: info.idTokenExpirationDate, isIDToken: false,
                issuedAt: credential.tokensIssuedAt)
        }
    }
}

extension SelectedCredential {
    /// The token to send to what the sign-in covers: a portal's access token; for an IAP sign-in the token the
    /// library sends to the hosts behind the proxy (`IAPCredential.proxyToken`): the ID token by default, the
    /// access token with `choice` `.access` or when no ID token is held. Its type is `Bearer` either way. Without
    /// `choice`, the one stored with the sign-in (`iap login --proxy-token`), else the ID token.
    func tokenForHosts(minimumValidity: Duration, choice: ProxyTokenChoice?) async throws -> IssuedToken {
        guard case .iap(let credential, let file) = self else {
            return try await token(minimumValidity: minimumValidity, force: false, idToken: false)
        }
        if let choice { credential.sendToProxyForThisProcess(choice.token) }
        let sent = try await credential.proxyToken(minimumValidity: minimumValidity)
        // The same rule as the call above, which it has just met: no second refresh.
        let info = try await credential.tokenInfo(minimumValidity: minimumValidity, keeping: sent.kind)
        if let refusal = credential.idTokenRefusal {
            StandardError.line(
                "portal-auth: warning: \(refusal); the new access and refresh tokens were kept, "
                    + "the ID token is still the one accepted before.")
        }
        return IssuedToken(
            kind: kind, target: target, url: credential.configuration.authorizeURL,
            clientID: credential.configuration.clientID,
            configurationFile: file, username: credential.username, value: sent.value, type: "Bearer",
            expirationDate: sent.expirationDate, idToken: info.idToken,
            idTokenExpirationDate: info.idTokenExpirationDate,
            isIDToken: sent.kind == .idToken, issuedAt: credential.tokensIssuedAt)
    }
}

extension SelectedCredential {
    /// Says, once per sign-in, that the provider issues `issued`'s kind of token for less than `--min-valid`, and
    /// what to set: such a token is handed out until half its lifetime has passed (the library's one freshness rule),
    /// so a script calling every few seconds is not told on every call. The library keeps "once" in the stored entry.
    func warnOnceAboutShortLifetime(of issued: IssuedToken, minValid: Int) async {
        let lifetime: Int?
        switch self {
        case .portal(let credential):
            lifetime = await credential.firstShortLifetimeNotice(minimumValidity: .seconds(minValid))
        case .iap(let credential, _):
            lifetime = await credential.firstShortLifetimeNotice(
                for: issued.isIDToken ? .idToken : .accessToken, minimumValidity: .seconds(minValid))
        }
        guard let lifetime else { return }
        StandardError.line(
            Self.shortLifetimeWarning(
                issuer: kind == .oauthUser ? "the portal" : "the identity provider",
                token: issued.isIDToken ? "ID tokens" : "access tokens",
                target: issued.target, lifetime: lifetime, minValid: minValid))
    }

    /// The warning of `warnOnceAboutShortLifetime`.
    static func shortLifetimeWarning(issuer: String, token: String, target: String, lifetime: Int, minValid: Int)
        -> String
    {
        "portal-auth: warning: \(issuer) issues \(token) valid for \(lifetime) s for \(target), less than --min-valid \(minValid); "
            + "each is handed out until half its lifetime has passed, then refreshed. To have every token last what you ask, "
            + "pass --min-valid \(max(0, lifetime / 2)) or less, or have the provider issue tokens valid for at least \(minValid) s. "
            + "(Said once for this sign-in.)"
    }
}

/// An IAP sign-in without an ID token (the configuration's scopes lack `openid`).
struct NoIDToken: CategorizedError, CustomStringConvertible {
    let target: String
    var category: ErrorCategory { .invalidContent }
    var description: String {
        "the identity provider sent no ID token" + MessagePart.given(" for ", target)
            + "; add \"openid\" to the configuration's scope and sign in again"
    }
}
