import PortalAuth

extension ArcGISCredentialStore {
    /// The stored IAP sign-in a new sign-in with `configuration` replaces, for its ID token (`id_token_hint` with
    /// `prompt=none`): the one stored for this configuration, else one for the same authorize URL and client ID
    /// (the same provider session, signed in with another copy of the file).
    func previousIAPSignIn(for configuration: IAPConfiguration) -> IAPCredential? {
        if let same = iapCredential(for: configuration) { return same }
        return credentials.lazy.compactMap { $0 as? IAPCredential }.first {
            $0.configuration.authorizeURL == configuration.authorizeURL && $0.configuration.clientID == configuration.clientID
        }
    }
}
