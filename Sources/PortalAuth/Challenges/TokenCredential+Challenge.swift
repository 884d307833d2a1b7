extension TokenCredential {
    /// Generates a token for `username` at the token service of the challenged resource (its portal, or the
    /// server that `{root}/rest/info` names), through the HTTP client of the manager that raised the challenge.
    ///
    /// - Throws: as `credential(for:username:password:tokenExpirationMinutes:referer:httpClient:)`;
    ///   `TokenServiceError.credentialsRefused` for a wrong username or password.
    public static func credential(
        for challenge: ArcGISAuthenticationChallenge, username: String, password: String, tokenExpirationMinutes: Int? = nil
    ) async throws -> TokenCredential {
        try await credential(
            for: challenge.requestURL, username: username, password: password, tokenExpirationMinutes: tokenExpirationMinutes,
            httpClient: challenge.httpClient)
    }
}
