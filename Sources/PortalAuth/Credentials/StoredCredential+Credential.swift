extension StoredCredential {
    /// The credential of the kind that wrote this record, rebuilt from it. An IAP sign-in made with a configuration
    /// file takes the file's current configuration when it names the same provider and client
    /// (`IAPConfigurationChange`): the file, not the stored copy, says which hosts are behind the proxy.
    package func credential(persistence: TokenKeeper.Persistence?, settings: SignInSettings) -> ArcGISCredential {
        guard kind == .iap else {
            return OAuthUserCredential(record: self, persistence: persistence, settings: settings)
        }
        switch IAPConfigurationChange.reading(IAPCredential.storedConfiguration(of: self)) {
        case .unchanged:
            return IAPCredential(record: self, persistence: persistence, settings: settings)
        case .updated(let current):
            // The record follows the file too, so `status` shows the hosts used and the next write keeps them.
            var record = self
            record.hostsBehindProxy = current.hostsBehindProxy
            record.logoutURL = current.logoutURL
            return IAPCredential(
                record: record, configuration: current.replacingRedirectURL(redirectURL), persistence: persistence,
                settings: settings)
        case .differs(let current, let differences):
            return IAPCredential(
                record: self, persistence: persistence, settings: settings,
                configurationChange: IAPCredential.ConfigurationChange(current: current, differences: differences))
        }
    }
}
