extension ArcGISCredential {
    /// The kinds of ArcGIS credential, each with the credential as its own class: the one place where a
    /// credential says what it is, so that no code has to cast an `ArcGISCredential` to find out.
    ///
    /// ```swift
    /// switch credential.kind {
    /// case .oAuthUser(let user): print(user.configuration.portalURL)
    /// case .iap(let iap): print(iap.configuration.authorizeURL)
    /// case .token, .oAuthApplication, .pregeneratedToken: break
    /// }
    /// ```
    public enum Kind: Sendable {
        /// A portal user signed in through the browser (OAuth 2.0 authorization code with PKCE).
        case oAuthUser(OAuthUserCredential)
        /// A user signed in to an Identity-Aware Proxy's identity provider (OpenID Connect).
        case iap(IAPCredential)
        /// A token generated from a username and password (`generateToken`).
        case token(TokenCredential)
        /// An application token (client credentials).
        case oAuthApplication(OAuthApplicationCredential)
        /// A token generated outside the library.
        case pregeneratedToken(PregeneratedTokenCredential)

        /// The OAuth user credential, when it is one.
        public var oAuthUser: OAuthUserCredential? {
            if case .oAuthUser(let credential) = self { return credential }
            return nil
        }

        /// The IAP credential, when it is one.
        public var iap: IAPCredential? {
            if case .iap(let credential) = self { return credential }
            return nil
        }

        /// Which kind this is, in the library's one vocabulary of kinds (what the store and the tool use).
        package var credentialKind: CredentialKind {
            switch self {
            case .oAuthUser: return .oauthUser
            case .iap: return .iap
            case .token: return .token
            case .oAuthApplication: return .oauthApplication
            case .pregeneratedToken: return .pregeneratedToken
            }
        }

        /// The name `status` and the store use: `oauth-user`, `iap`, `token`, `oauth-application`, `pregenerated-token`
        /// (`credentialKind`'s raw value).
        public var name: String { credentialKind.rawValue }

        /// The credential as a source of ArcGIS tokens; nil for an IAP credential, whose token is for the proxy.
        var arcGISTokenSource: (any ArcGISTokenSource)? {
            switch self {
            case .oAuthUser(let credential): return credential
            case .iap: return nil
            case .token(let credential): return credential
            case .oAuthApplication(let credential): return credential
            case .pregeneratedToken(let credential): return credential
            }
        }

        /// The credential whose tokens a `TokenKeeper` keeps (and a persistent store writes as a sign-in); nil for
        /// the kinds a store writes as a `CredentialStoreEntry` (token, application, pregenerated token).
        var tokenKeeping: (any TokenKeepingCredential)? {
            switch self {
            case .oAuthUser(let credential): return credential
            case .iap(let credential): return credential
            case .token, .oAuthApplication, .pregeneratedToken: return nil
            }
        }
    }
}
