package import Foundation
import PortalAuthCore

/// One credential as the persistent store keeps it: what it is for, and its tokens.
///
/// Holds tokens: never printed, logged or put into an error.
package struct StoredCredential: Sendable, Equatable {
    // MARK: - What it is for

    /// What kind of sign-in produced it: a kind that `isSignIn` (`init(json:)` reads no other).
    package var kind: CredentialKind
    var clientID: String
    /// The portal (OAuth user credentials).
    var portalURL: URL?
    var redirectURL: URL
    /// Refresh-token lifetime asked for at sign-in, in minutes (OAuth user credentials).
    var refreshTokenExpirationMinutes: Int?
    /// Exchange the refresh token when it has less than this left (OAuth user credentials).
    var refreshTokenExchangeSeconds: Int?
    /// The IAP configuration file, resolved to a real path (IAP credentials loaded from a file).
    var configurationFile: String?
    /// The IAP configuration's endpoints and hosts, kept so that `--url` matching and refreshing
    /// work without the file.
    var authorizeURL: URL?
    var tokenURL: URL
    var revokeURL: URL?
    var logoutURL: URL?
    var hostsBehindProxy: [String]

    // MARK: - Tokens

    var username: String?
    package var accessToken: String
    package var accessTokenExpiresAt: Date
    /// When the access token was issued (the moment its request left): with its expiry, the provider's lifetime,
    /// which `TokenFreshness` needs for tokens shorter than the validity asked; nil in entries written before.
    package var accessTokenIssuedAt: Date? = nil
    var refreshToken: String?
    var refreshTokenExpiresAt: Date?
    /// When the current refresh token was issued (its age decides the ArcGIS exchange); nil in entries
    /// written before it was recorded.
    var refreshTokenIssuedAt: Date? = nil
    var idToken: String?
    var idTokenExpiresAt: Date?
    /// When the ID token held was received (the moment its request left); nil in entries written before.
    var idTokenIssuedAt: Date? = nil
    /// Why the last ID token a refresh brought was refused (it failed a check); nil once one is accepted.
    /// The refresh's other tokens were kept, and `idToken` is the one accepted before. Never holds a token.
    var idTokenRefusal: String? = nil
    /// Why the identity provider last refused the refresh token (`invalid_grant`, …); nil until it does, and again
    /// after a new sign-in. `status` shows it instead of the refresh token's expiry. Never holds a token.
    var refreshTokenRefusal: String? = nil
    /// The granted scopes: the token response's `scope`, or what was asked for when it had none (RFC 6749 §5.1).
    var scopes: [String]
    var tokenType: String
    var isSSLRequired: Bool
    var createdAt: Date
    var updatedAt: Date
    /// The scopes asked for at sign-in (IAP credentials), when they differ from the granted ones or were
    /// recorded; nil in entries written before it was recorded.
    var requestedScopes: [String]? = nil
    /// The identity provider's keys (`jwks_uri` of its verified discovery document at sign-in), which refreshed ID
    /// tokens must be signed with; nil when none was known (the signature is then not checked).
    var jwksURI: URL? = nil
    /// Whether the provider's verified discovery document lists `none` among its ID-token signing algorithms.
    var signsIDTokensWithNone = false
    /// The issuer the sign-in's ID token was checked against (for Microsoft Entra's `organizations`/`common`, the
    /// template filled in with the token's tenant): the only issuer whose discovery document later uses of the
    /// sign-in (sign-out, revocation) may read. Nil when none was known, and in entries written before.
    var issuer: String? = nil
    /// Whether the provider's discovery document was looked for: at sign-in, or once, at the first refresh that brings
    /// an ID token, for an entry written before `jwks_uri` was recorded (then stored, found or not).
    var providerMetadataLookedUp = false
    /// The user's name and e-mail address as the provider's UserInfo endpoint gave them at sign-in.
    var userInfoName: String? = nil
    var userInfoEmail: String? = nil
    /// The provider lifetimes (seconds) of the tokens the caller was told are shorter than the validity it asks,
    /// by `access_token` / `id_token`: told once per sign-in and lifetime (`TokenKeeper.firstShortLifetimeNotice`).
    var shortLifetimesNoted: [String: Int] = [:]
    /// The token sent to the hosts behind the proxy, chosen at sign-in (IAP); nil when none was chosen (the ID
    /// token then, see `IAPCredential.tokenSentToProxy`) and in entries written before it was recorded.
    var proxyToken: IAPTokenInfo.Token? = nil
    /// The app that added it to a store it shares with the tool and other apps (`CredentialStoreScope.shared(as:)`),
    /// which alone may remove it from there; nil for the tool's sign-ins, an app's own store, and entries written
    /// before it was recorded.
    var addedBy: String? = nil
}

// MARK: - Keys

extension StoredCredential {
    /// This credential's key, as the credential kind that owns the record makes it.
    var key: String {
        if kind == .iap {
            return Self.iapKey(authorizeURL: authorizeURL ?? tokenURL, clientID: clientID, username: username)
        }
        return Self.oauthUserKey(portalURL: portalURL ?? tokenURL, clientID: clientID)
    }

    /// The key of an OAuth user sign-in: portal URL (as `OAuthUserConfiguration.normalizedPortalURL(_:)` writes
    /// it) and client ID.
    static func oauthUserKey(portalURL: URL, clientID: String) -> String {
        "\(CredentialKind.oauthUser.rawValue)|\(URLNormalization.comparable(OAuthUserConfiguration.normalizedPortalURL(portalURL)))|\(clientID)"
    }

    /// The key of an IAP sign-in: what identifies the sign-in — the identity provider (its authorize URL,
    /// normalised), the client ID and the user — so that an identical copy of the configuration file elsewhere
    /// names the same sign-in. The file last used is kept in the entry (`configuration_file`), not in the key.
    /// Stores written before keyed IAP entries by the file's path (`iap|/path/file.json|client`); such entries
    /// still load, and move to this key when the sign-in is next stored (see `ArcGISCredentialStore`).
    static func iapKey(authorizeURL: URL, clientID: String, username: String?) -> String {
        "\(CredentialKind.iap.rawValue)|\(URLNormalization.comparable(authorizeURL))|\(clientID)|\(username ?? "")"
    }
}

// MARK: - JSON

extension StoredCredential {
    /// The JSON object written to the store.
    package var json: JSONValue {
        var object = JSONObject()
        object["kind"] = .string(kind.rawValue)
        object["client_id"] = .string(clientID)
        object["portal_url"] = portalURL.map { .string($0.absoluteString) }
        object["redirect_url"] = .string(redirectURL.absoluteString)
        object["refresh_token_expiration_minutes"] = refreshTokenExpirationMinutes.map { .integer(Int64($0)) }
        object["refresh_token_exchange_seconds"] = refreshTokenExchangeSeconds.map { .integer(Int64($0)) }
        object["configuration_file"] = configurationFile.map { .string($0) }
        object["authorize_url"] = authorizeURL.map { .string($0.absoluteString) }
        object["token_url"] = .string(tokenURL.absoluteString)
        object["revoke_url"] = revokeURL.map { .string($0.absoluteString) }
        object["logout_url"] = logoutURL.map { .string($0.absoluteString) }
        object["hosts_behind_proxy"] = .array(hostsBehindProxy.map { .string($0) })
        object["username"] = username.map { .string($0) }
        object["access_token"] = .string(accessToken)
        object["access_token_expires_at"] = Self.preciseTimestamp(accessTokenExpiresAt)
        object["access_token_issued_at"] = accessTokenIssuedAt.map(Self.preciseTimestamp)
        object["refresh_token"] = refreshToken.map { .string($0) }
        object["refresh_token_expires_at"] = refreshTokenExpiresAt.map(Self.timestamp)
        object["refresh_token_issued_at"] = refreshTokenIssuedAt.map(Self.timestamp)
        object["id_token"] = idToken.map { .string($0) }
        object["id_token_expires_at"] = idTokenExpiresAt.map(Self.preciseTimestamp)
        object["id_token_issued_at"] = idTokenIssuedAt.map(Self.preciseTimestamp)
        object["id_token_refused"] = idTokenRefusal.map { .string($0) }
        object["refresh_token_refused"] = refreshTokenRefusal.map { .string($0) }
        object["scopes"] = .array(scopes.map { .string($0) })
        object["requested_scopes"] = requestedScopes.map { .array($0.map { .string($0) }) }
        object["jwks_uri"] = jwksURI.map { .string($0.absoluteString) }
        object["id_token_signing_none"] = signsIDTokensWithNone ? .bool(true) : nil
        object["issuer"] = issuer.map { .string($0) }
        object["provider_looked_up"] = providerMetadataLookedUp && jwksURI == nil ? .bool(true) : nil
        object["userinfo_name"] = userInfoName.map { .string($0) }
        object["userinfo_email"] = userInfoEmail.map { .string($0) }
        object["short_lifetime_noted"] =
            shortLifetimesNoted.isEmpty ? nil : Self.shortLifetimesJSON(shortLifetimesNoted)
        object["proxy_token"] = proxyToken.map { .string($0 == .idToken ? "id" : "access") }
        object[Self.addedByMember] = addedBy.map { .string($0) }
        object["token_type"] = .string(tokenType)
        object["ssl"] = .bool(isSSLRequired)
        object["created_at"] = Self.timestamp(createdAt)
        object["updated_at"] = Self.timestamp(updatedAt)
        return .object(object)
    }

    /// Reads an entry back; `nil` when a required field is missing or has the wrong type
    /// (the caller reports the entry as unusable by its key, never by its content).
    package init?(json: JSONValue) {
        guard let object = json.objectValue,
            let kind = object["kind"]?.stringValue.flatMap(CredentialKind.init(rawValue:)), kind.isSignIn,
            let clientID = object["client_id"]?.stringValue,
            let redirectURL = object["redirect_url"]?.stringValue.flatMap(URL.init(string:)),
            let tokenURL = object["token_url"]?.stringValue.flatMap(URL.init(string:)),
            let accessToken = object["access_token"]?.stringValue,
            let accessTokenExpiresAt = Self.date(object["access_token_expires_at"])
        else { return nil }
        // An IAP entry without its logout endpoint cannot be signed out of: treat it as unreadable.
        let logoutURL = object["logout_url"]?.stringValue.flatMap(URL.init(string:))
        if kind == .iap && logoutURL == nil { return nil }
        self.kind = kind
        self.clientID = clientID
        self.portalURL = object["portal_url"]?.stringValue.flatMap(URL.init(string:))
        self.redirectURL = redirectURL
        // A lifetime that would overflow when turned into seconds is not read (the default applies).
        self.refreshTokenExpirationMinutes = object["refresh_token_expiration_minutes"]?.integerValue
            .flatMap { (1...Int64(Int32.max)).contains($0) ? Int($0) : nil }
        self.refreshTokenExchangeSeconds = object["refresh_token_exchange_seconds"]?.integerValue.map { Int($0) }
        self.configurationFile = object["configuration_file"]?.stringValue
        self.authorizeURL = object["authorize_url"]?.stringValue.flatMap(URL.init(string:))
        self.tokenURL = tokenURL
        self.revokeURL = object["revoke_url"]?.stringValue.flatMap(URL.init(string:))
        self.logoutURL = logoutURL
        self.hostsBehindProxy = object["hosts_behind_proxy"]?.arrayValue?.compactMap(\.stringValue) ?? []
        self.username = object["username"]?.stringValue
        self.accessToken = accessToken
        self.accessTokenExpiresAt = accessTokenExpiresAt
        self.accessTokenIssuedAt = Self.date(object["access_token_issued_at"])
        self.refreshToken = object["refresh_token"]?.stringValue
        self.refreshTokenExpiresAt = Self.date(object["refresh_token_expires_at"])
        self.refreshTokenIssuedAt = Self.date(object["refresh_token_issued_at"])
        self.idToken = object["id_token"]?.stringValue
        self.idTokenExpiresAt = Self.date(object["id_token_expires_at"])
        self.idTokenIssuedAt = Self.date(object["id_token_issued_at"])
        self.idTokenRefusal = object["id_token_refused"]?.stringValue
        self.refreshTokenRefusal = object["refresh_token_refused"]?.stringValue
        self.scopes = object["scopes"]?.arrayValue?.compactMap(\.stringValue) ?? []
        self.requestedScopes = object["requested_scopes"]?.arrayValue?.compactMap(\.stringValue)
        self.jwksURI = object["jwks_uri"]?.stringValue.flatMap(URL.init(string:))
        self.signsIDTokensWithNone = object["id_token_signing_none"]?.boolValue ?? false
        self.issuer = object["issuer"]?.stringValue
        // Absent in entries written before it was recorded: a recorded jwks_uri says the lookup was made.
        self.providerMetadataLookedUp = object["provider_looked_up"]?.boolValue ?? (self.jwksURI != nil)
        self.userInfoName = object["userinfo_name"]?.stringValue
        self.userInfoEmail = object["userinfo_email"]?.stringValue
        self.shortLifetimesNoted = Self.shortLifetimes(object["short_lifetime_noted"])
        // Absent in older entries; a value this version does not know reads as no choice.
        self.proxyToken = object["proxy_token"]?.stringValue.flatMap {
            $0 == "id" ? .idToken : $0 == "access" ? .accessToken : nil
        }
        self.addedBy = object[Self.addedByMember]?.stringValue
        self.tokenType = object["token_type"]?.stringValue ?? "Bearer"
        self.isSSLRequired = object["ssl"]?.boolValue ?? false
        self.createdAt = Self.date(object["created_at"]) ?? Date(timeIntervalSince1970: 0)
        self.updatedAt = Self.date(object["updated_at"]) ?? Date(timeIntervalSince1970: 0)
    }

    /// The member naming the app that added an entry to a shared store (every kind of entry has it).
    static let addedByMember = "added_by"

    /// `short_lifetime_noted`: `{"access_token": 20}`.
    static func shortLifetimesJSON(_ noted: [String: Int]) -> JSONValue {
        var object = JSONObject()
        for (name, seconds) in noted.sorted(by: { $0.key < $1.key }) { object[name] = .integer(Int64(seconds)) }
        return .object(object)
    }

    /// `short_lifetime_noted` read back; what is not a whole number of seconds in range is left out.
    static func shortLifetimes(_ value: JSONValue?) -> [String: Int] {
        var noted: [String: Int] = [:]
        for member in value?.objectValue?.members ?? [] {
            if let seconds = member.value.integerValue, (0...Int64(Int32.max)).contains(seconds) {
                noted[member.key] = Int(seconds)
            }
        }
        return noted
    }

    /// The largest timestamp magnitude read or written, in seconds from 1970 (about 31 million years): far beyond
    /// any lifetime a token endpoint can give (`TokenResponse` takes under 1e12 s), and well inside `Int64`.
    static let timestampLimit = 1e15

    /// A stored timestamp; `nil` when it is not a number or not finite and within ``timestampLimit``
    /// (a hand-edited `1e300` once trapped when the entry was written back).
    private static func date(_ value: JSONValue?) -> Date? {
        guard let seconds = value?.doubleValue, seconds.isFinite, abs(seconds) <= timestampLimit else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }

    /// Whole seconds from 1970, clamped to ``timestampLimit`` so that writing never traps and always reads back.
    private static func timestamp(_ date: Date) -> JSONValue {
        let seconds = date.timeIntervalSince1970.rounded()
        return .integer(Int64(seconds.isNaN ? 0 : min(max(seconds, -timestampLimit), timestampLimit)))
    }

    /// Seconds from 1970 to the millisecond (an integer when whole), clamped like `timestamp(_:)`: the issue and expiry
    /// times of the access and ID tokens, which `TokenFreshness` compares at sub-second scale. Whole seconds would
    /// shift a 1-second token's first half by up to half a second, so that another process handed it out with
    /// 20 ms left. Readers of every version take both forms (a number of seconds).
    private static func preciseTimestamp(_ date: Date) -> JSONValue {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        guard milliseconds.isFinite, abs(milliseconds) < timestampLimit * 1000 else { return timestamp(date) }
        let seconds = milliseconds / 1000
        return seconds == seconds.rounded() ? .integer(Int64(seconds)) : .number(seconds)
    }
}
