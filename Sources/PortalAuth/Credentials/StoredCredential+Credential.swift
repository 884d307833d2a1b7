extension StoredCredential {
    /// The credential of the kind that wrote this record, rebuilt from it.
    package func credential(persistence: TokenKeeper.Persistence?, settings: SignInSettings) -> ArcGISCredential {
        switch kind {
        case .oauthUser: return OAuthUserCredential(record: self, persistence: persistence, settings: settings)
        case .iap: return IAPCredential(record: self, persistence: persistence, settings: settings)
        }
    }
}
