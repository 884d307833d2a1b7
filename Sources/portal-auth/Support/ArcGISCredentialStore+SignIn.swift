import PortalAuth

extension ArcGISCredentialStore {
    /// Stores a new sign-in; when the store file was corrupted, says on standard error where the unreadable copy
    /// was kept (it is renamed, never overwritten). A portal app is remembered (its client ID serves later
    /// suggestions), and `name`, when given, names the sign-in.
    ///
    /// The newest sign-in is the active one, as with `gh auth login` and `az login`: when other sign-ins are stored,
    /// it becomes the default (`portal-auth use`), and the person is told so and how to change it.
    ///
    /// An IAP sign-in keeps `proxyToken` (`iap login --proxy-token`) as its choice of the token sent to the hosts
    /// behind the proxy; without one, the choice of the sign-in it replaces.
    func keepSignIn(_ credential: ArcGISCredential, name: String? = nil, proxyToken: ProxyTokenChoice? = nil)
        async throws
    {
        if let iap = credential as? IAPCredential {
            if let proxyToken {
                iap.storedTokenSentToProxy = proxyToken.token
            } else if iap.storedTokenSentToProxy == nil,
                let kept = previousIAPSignIn(for: iap.configuration)?.storedTokenSentToProxy
            {
                iap.storedTokenSentToProxy = kept
            }
        }
        if let recovery = try await addAndPersist(credential) {
            StandardError.line("portal-auth: warning: \(recovery.description)")
        }
        let key = SignInSelection.storeKey(of: credential)
        let others = credentials.filter { SignInSelection.storeKey(of: $0) != key }.count
        var becameDefault = false
        do {
            try updatePreferences { preferences in
                if let portal = credential.kind.oAuthUser?.configuration {
                    preferences.remember(
                        .init(portalURL: portal.portalURL, clientID: portal.clientID, redirectURL: portal.redirectURL))
                }
                if let name, let key { preferences.names[name] = key }
                if others > 0, let key, preferences.defaultKey != key {
                    preferences.defaultKey = key
                    becameDefault = true
                }
            }
            if becameDefault {
                StandardError.line(
                    "It is now the default sign-in (\(others + 1) are stored); `portal-auth status` lists them, "
                        + "`portal-auth use` with --portal, --iap or --name picks another.")
            }
        } catch {
            StandardError.line(
                "portal-auth: warning: the sign-in is stored, but its name and app could not be remembered: \(error)")
        }
    }
}

extension ArcGISCredentialStore {
    /// Where a sign-in's tokens were just stored, as `status` tells it: "the desktop keyring (index: PATH)", "PATH"
    /// or "memory".
    var tokensPlace: String {
        guard let file else { return "memory" }
        let path = DisplayText.path(file.path)
        return file.backend == .keyring ? "the desktop keyring (index: \(path))" : path
    }
}

extension ArcGISCredentialStore {
    /// The stored IAP sign-in a new sign-in with `configuration` replaces, for its ID token (`id_token_hint` with
    /// `prompt=none`): the one stored for this configuration, else one for the same authorize URL and client ID
    /// (the same provider session, signed in with another copy of the file).
    func previousIAPSignIn(for configuration: IAPConfiguration) -> IAPCredential? {
        if let same = iapCredential(for: configuration) { return same }
        return credentials.lazy.compactMap { $0 as? IAPCredential }.first {
            $0.configuration.authorizeURL == configuration.authorizeURL
                && $0.configuration.clientID == configuration.clientID
        }
    }
}
