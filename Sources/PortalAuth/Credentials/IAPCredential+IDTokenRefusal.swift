extension IAPCredential {
    /// Why the ID token of the last refresh was refused (it failed a check of its format, audience, issuer or
    /// expiry), or nil when the last one was accepted.
    ///
    /// A refused ID token does not cost the sign-in: the refresh's access and refresh tokens were kept (with a
    /// rotating provider the previous refresh token is already dead), and `tokenInfo.idToken` is still the ID
    /// token accepted before. The text names the check that failed; it never contains a token.
    public var idTokenRefusal: String? { keeper.current.idTokenRefusal }
}
