/// A credential that gives ArcGIS tokens: what the authenticated request code asks of every token kind.
protocol ArcGISTokenSource: ArcGISCredential {
    /// A valid token; with `renew`, a new one although the current one has not expired (the server answered
    /// 498 Invalid token). Throws when no new token can be had.
    func validTokenInfo(renew: Bool) async throws -> TokenInfo
}

extension OAuthUserCredential: ArcGISTokenSource {
    func validTokenInfo(renew: Bool) async throws -> TokenInfo {
        try await tokenInfo(minimumValidity: nil, forceRefresh: renew)
    }
}

extension TokenCredential: ArcGISTokenSource {
    func validTokenInfo(renew: Bool) async throws -> TokenInfo {
        try await tokenInfo(forceRegeneration: renew)
    }
}

extension OAuthApplicationCredential: ArcGISTokenSource {
    func validTokenInfo(renew: Bool) async throws -> TokenInfo {
        try await tokenInfo(forceRegeneration: renew)
    }
}

extension PregeneratedTokenCredential: ArcGISTokenSource {
    func validTokenInfo(renew: Bool) async throws -> TokenInfo {
        if renew {
            throw CredentialError.signInRequired(targetDescription, because: "the server refused the pregenerated token; generate a new token")
        }
        return try await tokenInfo
    }
}
