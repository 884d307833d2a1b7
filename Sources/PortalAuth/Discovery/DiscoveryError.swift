import Foundation
import PortalAuthCore

/// A discovery document that cannot be trusted: it describes the configured authorize endpoint but names another
/// issuer than the URL it was fetched for (OpenID Connect Discovery §4.3), or disagrees with the issuer given in
/// the configuration (a mix-up, RFC 9700 §4.4), or names a key set (`jwks_uri`) that cannot be used. The sign-in
/// stops before the browser opens and before any code or PKCE verifier is sent.
package struct DiscoveryError: Error, Sendable, CustomStringConvertible, CategorizedError {
    private let text: String

    private init(_ text: String) { self.text = text }

    init(text: String) { self.text = text }

    static func issuerMismatch(document: URL, claimed: String?, expected: String) -> DiscoveryError {
        let claim =
            claimed.flatMap { $0.isEmpty ? nil : "issuer \(DisplayText.neutralised($0, limit: 200))" }
            ?? "no usable issuer"
        let fetchedFor =
            expected.isEmpty ? "the issuer it was fetched for" : "\(expected), the issuer it was fetched for"
        return DiscoveryError(
            "the OpenID Connect discovery document \(RedactedURL(document)) names \(claim), not \(fetchedFor) "
                + "(OpenID Connect Discovery §4.3); a provider that claims another's issuer may be relaying the sign-in to steal it "
                + "(mix-up attack), so nothing was opened or sent. If the provider is genuine, give its issuer explicitly "
                + "(IAPConfiguration.issuer, the configuration file's issuer)")
    }

    static func authorizeEndpointMismatch(document: URL, advertised: String?, configured: URL) -> DiscoveryError {
        let named =
            advertised.flatMap {
                $0.isEmpty ? nil : "authorization_endpoint \(DisplayText.neutralised($0, limit: 200))"
            }
            ?? "no authorization_endpoint"
        return DiscoveryError(
            "the OpenID Connect discovery document \(RedactedURL(document)) of the issuer given names \(named), not the configured "
                + "\(RedactedURL(configured)); nothing was opened or sent. Check the issuer and the authorize_url")
    }

    /// A `jwks_uri` the keys cannot be fetched from safely; `value` and `problem` are neutralised here.
    static func unusableKeySet(document: URL, value: String, problem: String) -> DiscoveryError {
        DiscoveryError(
            "the OpenID Connect discovery document \(RedactedURL(document)) names "
                + (value.isEmpty ? "an empty jwks_uri" : "jwks_uri \(DisplayText.neutralised(value, limit: 200))")
                + ", which cannot be used"
                + (problem.isEmpty ? "" : ": \(DisplayText.neutralised(problem, limit: 300))")
                + ". ID tokens could not be verified with it, and an "
                + "ID token whose signature is not verified is not accepted, so nothing was opened or sent; the provider must "
                + "publish its keys at an https URL")
    }

    public var category: ErrorCategory { .invalidContent }
    public var description: String { text }
}
