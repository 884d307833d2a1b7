extension StoredCredential {
    /// The credential of the kind that wrote this record, rebuilt from it.
    package func credential(persistence: TokenKeeper.Persistence?, settings: SignInSettings) -> ArcGISCredential {
        kind == .iap
            ? IAPCredential(record: self, persistence: persistence, settings: settings)
            : OAuthUserCredential(record: self, persistence: persistence, settings: settings)
    }
}
