import Foundation
import PortalAuthCore

/// A discovery document that cannot be trusted: it describes the configured authorize endpoint but names another
/// issuer than the URL it was fetched for (OpenID Connect Discovery §4.3), or disagrees with the issuer given in
/// the configuration. The sign-in stops before the browser opens and before any code or
/// PKCE verifier is sent (RFC 9700 §4.4, mix-up).
package struct DiscoveryError: Error, Sendable, CustomStringConvertible, CategorizedError {
    private let text: String

    private init(_ text: String) { self.text = text }

    static func issuerMismatch(document: URL, claimed: String?, expected: String) -> DiscoveryError {
        let claim = claimed.map { "issuer \(DisplayText.neutralised($0, limit: 200))" } ?? "no usable issuer"
        return DiscoveryError(
            "the OpenID Connect discovery document \(RedactedURL(document)) names \(claim), not \(expected), the issuer it was fetched for "
                + "(OpenID Connect Discovery §4.3); a provider that claims another's issuer may be relaying the sign-in to steal it "
                + "(mix-up attack), so nothing was opened or sent. If the provider is genuine, give its issuer explicitly "
                + "(IAPConfiguration.issuer, the configuration file's issuer)")
    }

    static func authorizeEndpointMismatch(document: URL, advertised: String?, configured: URL) -> DiscoveryError {
        let named = advertised.map { "authorization_endpoint \(DisplayText.neutralised($0, limit: 200))" } ?? "no authorization_endpoint"
        return DiscoveryError(
            "the OpenID Connect discovery document \(RedactedURL(document)) of the issuer given names \(named), not the configured "
                + "\(RedactedURL(configured)); nothing was opened or sent. Check the issuer and the authorize_url")
    }

    public var category: ErrorCategory { .invalidContent }
    public var description: String { text }
}
