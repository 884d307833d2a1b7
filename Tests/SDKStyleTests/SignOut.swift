import PortalAuth

/// An app's sign-out, as the SDK's "Create and store credentials" page and the toolkit's `AuthenticationManager`
/// extension write it: revoke the OAuth tokens, invalidate the IAP credentials, clear both stores.
struct SignOut {
    let authenticationManager: AuthenticationManager

    func signOut() async {
        await revokeOAuthTokens()
        await invalidateIAPCredentials()
        authenticationManager.arcGISCredentialStore.removeAll()
        await authenticationManager.networkCredentialStore.removeAll()
    }

    @discardableResult
    func revokeOAuthTokens() async -> Bool {
        let oAuthUserCredentials = authenticationManager.arcGISCredentialStore.credentials.compactMap {
            $0 as? OAuthUserCredential
        }
        return await withTaskGroup(of: Bool.self, returning: Bool.self) { group in
            for credential in oAuthUserCredentials {
                group.addTask {
                    do {
                        try await credential.revokeToken()
                        return true
                    } catch {
                        return false
                    }
                }
            }
            return await group.allSatisfy(\.self)
        }
    }

    @discardableResult
    func invalidateIAPCredentials() async -> Bool {
        let iapCredentials = authenticationManager.arcGISCredentialStore.credentials.compactMap {
            $0 as? IAPCredential
        }
        return await withTaskGroup(of: Bool.self, returning: Bool.self) { group in
            for credential in iapCredentials {
                group.addTask {
                    return (try? await credential.invalidate()) ?? false
                }
            }
            return await group.allSatisfy(\.self)
        }
    }
}
