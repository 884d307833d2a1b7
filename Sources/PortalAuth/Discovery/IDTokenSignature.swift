import Foundation
import PortalAuthCore
import PortalAuthTransport

/// The check of an ID token's signature against its provider's keys: done always, and an ID token whose signature
/// is not verified is refused (fail closed), whatever OIDC Core 3.1.3.7 rule 6 would allow over TLS.
enum IDTokenSignature {
    /// Checks `token`'s signature with the keys at `jwksURI` (the provider's `jwks_uri`).
    ///
    /// The `kid` names the key; without one, every key of the algorithm's type is tried. An unknown `kid` makes one
    /// new fetch of the keys (rotation). `alg: none` is accepted only when the provider's discovery document lists
    /// `none` among its signing algorithms (`signsWithNone`) and the token came from its token endpoint over TLS: the
    /// one exception. With no discovery document or one without `jwks_uri` (`jwksURI` nil), or a key set address that
    /// is not an https URL, the signature cannot be checked and the token is refused; so it is when no usable key of
    /// the algorithm remains (the keys left out are named: weak RSA keys, points off their curve).
    ///
    /// - Throws: `IDTokenError` saying why.
    static func verify(
        _ token: IDToken, jwksURI: URL?, signsWithNone: Bool, tokenURL: URL, httpClient: any TransportClient,
        keys: ProviderKeys = .shared, now: Date = Date()
    ) async throws(IDTokenError) {
        guard let name = token.algorithm else { throw .signature("the token's header names no algorithm (alg)") }
        if name.lowercased() == "none" {
            guard signsWithNone, tokenURL.scheme?.lowercased() == "https", token.signature.isEmpty else {
                throw .signature(
                    "the token is unsigned (alg none), and the provider does not say it signs with none over TLS")
            }
            return
        }
        guard let algorithm = JWSAlgorithm(rawValue: name) else {
            throw .signature(
                "its algorithm \(DisplayText.neutralised(name, limit: 40)) is not one of \(JWSAlgorithm.allCases.map(\.rawValue).joined(separator: ", "))"
            )
        }
        guard let jwksURI else {
            throw .keys(
                "the provider's signing keys are unknown (no OpenID Connect discovery document naming a jwks_uri was found "
                    + "for it), and an ID token whose signature is not verified is not accepted. If the provider publishes its "
                    + "discovery document under another issuer, give that issuer (IAPConfiguration.issuer)")
        }
        if let problem = URLRules.endpointProblem(jwksURI) {
            throw .keys(
                "the provider's key set address \(RedactedURL(jwksURI)) cannot be used: \(DisplayText.neutralised(problem, limit: 300))"
            )
        }
        var fetched = try await keys.keys(at: jwksURI, httpClient: httpClient, now: now)
        if let kid = token.keyID, !fetched.keys.contains(where: { $0.keyID == kid }) {
            fetched = try await keys.keys(at: jwksURI, refetching: true, httpClient: httpClient, now: now)
        }
        let candidates = fetched.keys.filter {
            ($0.keyID == nil || token.keyID == nil || $0.keyID == token.keyID) && $0.fits(algorithm)
        }
        guard !candidates.isEmpty else {
            let named = token.keyID.map { "key \(DisplayText.neutralised($0, limit: 80))" } ?? "a key"
            let leftOut =
                fetched.skipped.isEmpty
                ? ""
                : "; keys left out: " + fetched.skipped.prefix(5).joined(separator: "; ")
                    + (fetched.skipped.count > 5 ? "; and \(fetched.skipped.count - 5) more" : "")
            throw .signature(
                "the provider's keys at \(RedactedURL(jwksURI)) have no usable \(named) for \(algorithm.rawValue)\(leftOut)"
            )
        }
        let input = token.signingInput
        guard candidates.contains(where: { $0.verifies(token.signature, of: input, algorithm: algorithm) }) else {
            throw .signature(
                "the \(algorithm.rawValue) signature does not verify with the provider's keys at \(RedactedURL(jwksURI))"
            )
        }
    }
}
