/// A credential that gives ArcGIS tokens: what the authenticated request code asks of every token kind.
import PortalAuthStore

protocol ArcGISTokenSource: ArcGISCredential {
    /// A valid token; with `renew`, a new one although the current one has not expired (the server answered
    /// 498 Invalid token). Throws when no new token can be had.
    func validTokenInfo(renew: Bool) async throws -> TokenInfo

    /// A token to send instead of `refused`, which a server refused (498 Invalid token): a new one while `refused`
    /// is still the current token, else the one that already replaced it — one renewal per expiry however many
    /// requests saw the old token refused. Throws when no new token can be had.
    func renewedTokenInfo(refused: String) async throws -> TokenInfo
}

extension OAuthUserCredential: ArcGISTokenSource {
    func validTokenInfo(renew: Bool) async throws -> TokenInfo {
        try await tokenInfo(minimumValidity: nil, forceRefresh: renew)
    }

    func renewedTokenInfo(refused: String) async throws -> TokenInfo {
        try tokenInfo(of: await keeper.validCredential(force: true, refused: refused))
    }
}

extension TokenCredential: ArcGISTokenSource {
    func validTokenInfo(renew: Bool) async throws -> TokenInfo {
        try await tokenInfo(forceRegeneration: renew)
    }

    func renewedTokenInfo(refused: String) async throws -> TokenInfo {
        try await token.valid(force: true, refused: refused)
    }
}

extension OAuthApplicationCredential: ArcGISTokenSource {
    func validTokenInfo(renew: Bool) async throws -> TokenInfo {
        try await tokenInfo(forceRegeneration: renew)
    }

    func renewedTokenInfo(refused: String) async throws -> TokenInfo {
        try await token.valid(force: true, refused: refused)
    }
}

extension PregeneratedTokenCredential: ArcGISTokenSource {
    func renewedTokenInfo(refused: String) async throws -> TokenInfo {
        try await validTokenInfo(renew: true)
    }

    func validTokenInfo(renew: Bool) async throws -> TokenInfo {
        if renew {
            throw CredentialError.signInRequired(
                targetDescription, because: "the server refused the pregenerated token; generate a new token")
        }
        return try await tokenInfo
    }
}
