import Foundation
import PortalAuthCore
import PortalAuthStore

/// How the credentials kept without a `TokenKeeper` — `TokenCredential`, `OAuthApplicationCredential`,
/// `PregeneratedTokenCredential` — are written to a persistent `ArcGISCredentialStore` and read back.
///
/// Each is one entry of the store, beside the OAuth and IAP sign-ins: its token and expiry, and what renews it.
/// A `TokenCredential` keeps its password (`password`) and an `OAuthApplicationCredential` its client secret
/// (`client_secret`), since those kinds renew with them; a `PregeneratedTokenCredential` keeps its token only. The
/// secret members go to the desktop keyring item where the store uses one (never to the index file), else to the
/// 0600 store file, as the other entries' tokens do. Never printed or logged.
enum CredentialStoreEntry {
    /// The kinds of these entries: those that are not sign-ins.
    static let kinds = CredentialKind.allCases.filter { !$0.isSignIn }

    /// The store key and entry of `credential`; nil for the kinds a `TokenKeeper` keeps (OAuth user, IAP).
    static func entry(for credential: ArcGISCredential, now: Date = Date()) -> (key: String, entry: JSONObject)? {
        var object = JSONObject()
        let key: String
        let info: TokenInfo
        switch credential.kind {
        case .oAuthUser, .iap:
            return nil
        case .token(let token):
            info = token.token.current
            key =
                "\(CredentialKind.token.rawValue)|\(URLNormalization.comparable(token.service.root))|\(token.username ?? "")"
            object["url"] = .string(token.url.absoluteString)
            object["username"] = token.username.map { .string($0) }
            object["password"] = .string(token.password)
            object["token_service_url"] = .string(token.tokenServiceURL.absoluteString)
            object["root_url"] = .string(token.service.root.absoluteString)
            object["token_expiration_minutes"] = token.tokenExpirationMinutes.map { .integer(Int64($0)) }
        case .oAuthApplication(let application):
            info = application.token.current
            key =
                "\(CredentialKind.oauthApplication.rawValue)|\(URLNormalization.comparable(application.portalURL))|\(application.clientID)"
            object["url"] = .string(application.portalURL.absoluteString)
            object["client_id"] = .string(application.clientID)
            object["client_secret"] = .string(application.clientSecret)
            object["token_expiration_minutes"] = application.tokenExpirationMinutes.map { .integer(Int64($0)) }
        case .pregeneratedToken(let pregenerated):
            info = pregenerated.info
            key = "\(CredentialKind.pregeneratedToken.rawValue)|\(URLNormalization.comparable(pregenerated.root))"
            object["url"] = .string(pregenerated.url.absoluteString)
        }
        object["kind"] = .string(credential.kind.name)
        object["access_token"] = .string(info.accessToken)
        object["access_token_expires_at"] = .integer(Int64(info.expirationDate.timeIntervalSince1970.rounded(.down)))
        object["ssl"] = .bool(info.isSSLRequired)
        object["referer"] = .string(credential.referer)
        object["updated_at"] = .integer(Int64(now.timeIntervalSince1970.rounded(.down)))
        return (key, object)
    }

    /// Whether `entry` is one of these kinds (read by `credential(from:settings:)`, not by `StoredCredential`).
    static func isEntry(_ entry: JSONObject) -> Bool {
        entry["kind"]?.stringValue.flatMap(CredentialKind.init(rawValue:)).map(kinds.contains) ?? false
    }

    /// The credential an entry holds; nil when a member it needs is missing or malformed.
    static func credential(from entry: JSONObject, settings: SignInSettings) -> ArcGISCredential? {
        guard let kind = entry["kind"]?.stringValue.flatMap(CredentialKind.init(rawValue:)),
            let url = entry["url"]?.stringValue.flatMap(URL.init(string:)),
            let token = entry["access_token"]?.stringValue,
            let seconds = entry["access_token_expires_at"]?.integerValue, abs(Double(seconds)) <= 1e15,
            let info = TokenInfo(
                accessToken: token, expirationDate: Date(timeIntervalSince1970: Double(seconds)),
                isSSLRequired: entry["ssl"]?.boolValue ?? false)
        else { return nil }
        let referer = entry["referer"]?.stringValue ?? ""
        let minutes = entry["token_expiration_minutes"]?.integerValue.flatMap {
            (1...Int64(Int32.max)).contains($0) ? Int($0) : nil
        }
        switch kind {
        case .token:
            guard let username = entry["username"]?.stringValue, let password = entry["password"]?.stringValue,
                let service = entry["token_service_url"]?.stringValue.flatMap(URL.init(string:)),
                let root = entry["root_url"]?.stringValue.flatMap(URL.init(string:))
            else { return nil }
            return TokenCredential.restored(
                url: url, username: username, password: password, referer: referer, tokenExpirationMinutes: minutes,
                service: TokenService(generateTokenURL: service, root: root), token: info,
                httpClient: settings.httpClient,
                now: { Date() })
        case .oauthApplication:
            guard let clientID = entry["client_id"]?.stringValue, let secret = entry["client_secret"]?.stringValue
            else { return nil }
            return try? OAuthApplicationCredential.restored(
                portalURL: url, clientID: clientID, clientSecret: secret, tokenExpirationMinutes: minutes, token: info,
                httpClient: settings.httpClient, now: { Date() })
        case .pregeneratedToken:
            return PregeneratedTokenCredential(url: url, tokenInfo: info, referer: referer.isEmpty ? nil : referer)
        case .oauthUser, .iap:
            return nil
        }
    }
}
