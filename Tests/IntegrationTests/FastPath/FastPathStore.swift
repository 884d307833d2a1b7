import Foundation

/// The credential stores of the fast-path differential tests: store files written as the tool writes them,
/// with token endpoints on a closed loopback port, so that a refresh fails the same way every time (no server).
enum FastPathStore: String, CaseIterable, Sendable {
    /// One portal sign-in with a token valid for two hours.
    case valid
    /// The same, with 100 s left (less than the default --min-valid 300: a refresh is tried).
    case expiring
    /// The same, expired a minute ago.
    case expired
    /// Not JSON.
    case corrupted
    /// An empty file.
    case emptyFile
    /// A valid store without entries.
    case noEntries
    /// Two apps signed in to the same portal, and an IAP sign-in covering *.contoso.com.
    case several
    /// No file at all.
    case missing

    /// The portal of every portal entry.
    static let portal = "https://gis.example.com/portal"
    /// The IAP configuration file named by the IAP entry (never read by `token`).
    static let iapFile = "/etc/portal-auth/contoso-iap.json"
    /// A token endpoint nothing listens on (port 9 is discard, closed on test machines).
    static let tokenURL = "http://127.0.0.1:9/sharing/rest/oauth2/token"

    /// Writes the store as `file` (0600); nothing for `.missing`.
    func write(to file: URL, now: Int64) throws {
        let text: String
        switch self {
        case .valid: text = Self.document([Self.portalEntry(client: "app1", expiresAt: now + 7200, now: now)])
        case .expiring: text = Self.document([Self.portalEntry(client: "app1", expiresAt: now + 100, now: now)])
        case .expired: text = Self.document([Self.portalEntry(client: "app1", expiresAt: now - 60, now: now)])
        case .corrupted: text = "{\"entries\": {\"oauth-user|x\": "
        case .emptyFile: text = ""
        case .noEntries: text = Self.document([])
        case .several:
            text = Self.document([
                Self.portalEntry(client: "app1", expiresAt: now + 7200, now: now),
                Self.portalEntry(client: "app2", expiresAt: now + 3600, now: now),
                Self.iapEntry(expiresAt: now + 5400, now: now),
            ])
        case .missing: return
        }
        guard
            FileManager.default.createFile(
                atPath: file.path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
        else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: file.path])
        }
    }

    // MARK: - Entries

    private static func document(_ entries: [(String, String)]) -> String {
        let members = entries.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ")
        return "{\"entries\": {\(members)}, \"format\": \"portal-auth-credentials\", \"version\": 1}"
    }

    private static func portalEntry(client: String, expiresAt: Int64, now: Int64) -> (String, String) {
        (
            "oauth-user|\(portal)|\(client)",
            """
            {"access_token": "AT-\(client)", "access_token_expires_at": \(expiresAt), "client_id": "\(client)", \
            "created_at": \(now), "hosts_behind_proxy": [], "kind": "oauth-user", "portal_url": "\(portal)", \
            "redirect_url": "http://127.0.0.1/callback", "refresh_token": "RT-\(client)", \
            "refresh_token_exchange_seconds": 86400, "refresh_token_expiration_minutes": 20160, \
            "refresh_token_expires_at": \(now + 14 * 86400), "revoke_url": "http://127.0.0.1:9/revokeToken", \
            "scopes": [], "ssl": true, "token_type": "Bearer", "token_url": "\(tokenURL)", "updated_at": \(now), \
            "username": "jdoe"}
            """
        )
    }

    private static func iapEntry(expiresAt: Int64, now: Int64) -> (String, String) {
        (
            "iap|\(iapFile)|c",
            """
            {"access_token": "AT-iap", "access_token_expires_at": \(expiresAt), \
            "authorize_url": "https://login.example/authorize", "client_id": "c", "configuration_file": "\(iapFile)", \
            "created_at": \(now), "hosts_behind_proxy": ["*.contoso.com"], "id_token": "h.p.s", \
            "id_token_expires_at": \(expiresAt), "kind": "iap", "logout_url": "https://login.example/logout", \
            "redirect_url": "http://localhost/callback", "refresh_token": "RT-iap", \
            "scopes": ["openid", "offline_access"], "ssl": false, "token_type": "Bearer", "token_url": "\(tokenURL)", \
            "updated_at": \(now), "username": "a@contoso.com"}
            """
        )
    }
}
