import PortalAuth

/// `--id-token` when the identity provider's refreshed ID token was refused and the one accepted before no
/// longer lasts long enough: the sign-in itself is intact (its access and refresh tokens were kept).
struct RefusedIDToken: CategorizedError, CustomStringConvertible {
    let target: String
    /// `IAPCredential.idTokenRefusal`: which check failed (never a token).
    let refusal: String
    var category: ErrorCategory { .invalidContent }
    var description: String {
        "no valid ID token for \(target): \(refusal). The access and refresh tokens are kept; try again later, "
            + "and if the identity provider keeps sending ID tokens that fail, check its configuration and this machine's clock"
    }
}
