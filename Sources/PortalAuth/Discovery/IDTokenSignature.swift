import Foundation
import PortalAuthCore
import PortalAuthTransport

/// The check of an ID token's signature against its provider's keys (OIDC Core 3.1.3.7 rule 6, done always where
/// the keys are known).
enum IDTokenSignature {
    /// Checks `token`'s signature with the keys at `jwksURI` (the provider's `jwks_uri`).
    ///
    /// The `kid` names the key; without one, every key of the algorithm's type is tried. An unknown `kid` makes one
    /// new fetch of the keys (rotation). `alg: none` is accepted only when the provider's discovery document lists
    /// `none` among its signing algorithms (`signsWithNone`) and the token came from its token endpoint over TLS. With no
    /// discovery document or one without `jwks_uri` (`jwksURI` nil), the signature cannot be checked and the token is taken
    /// on the token endpoint's word (rule 6's TLS exception) — unless it says `none`, which is refused.
    ///
    /// - Throws: `IDTokenError` saying why.
    static func verify(
        _ token: IDToken, jwksURI: URL?, signsWithNone: Bool, tokenURL: URL, httpClient: any TransportClient,
        keys: ProviderKeys = .shared, now: Date = Date()
    ) async throws(IDTokenError) {
        guard let name = token.algorithm else { throw .signature("the token's header names no algorithm (alg)") }
        if name.lowercased() == "none" {
            guard signsWithNone, tokenURL.scheme?.lowercased() == "https", token.signature.isEmpty else {
                throw .signature("the token is unsigned (alg none), and the provider does not say it signs with none over TLS")
            }
            return
        }
        guard let algorithm = JWSAlgorithm(rawValue: name) else {
            throw .signature("its algorithm \(DisplayText.neutralised(name, limit: 40)) is not one of \(JWSAlgorithm.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard let jwksURI else { return }
        var fetched = try await keys.keys(at: jwksURI, httpClient: httpClient, now: now)
        if let kid = token.keyID, !fetched.contains(where: { $0.keyID == kid }) {
            fetched = try await keys.keys(at: jwksURI, refetching: true, httpClient: httpClient, now: now)
        }
        let candidates = fetched.filter { ($0.keyID == nil || token.keyID == nil || $0.keyID == token.keyID) && $0.fits(algorithm) }
        guard !candidates.isEmpty else {
            let named = token.keyID.map { "key \(DisplayText.neutralised($0, limit: 80))" } ?? "a key"
            throw .signature("the provider's keys at \(RedactedURL(jwksURI)) have no \(named) for \(algorithm.rawValue)")
        }
        let input = token.signingInput
        guard candidates.contains(where: { $0.verifies(token.signature, of: input, algorithm: algorithm) }) else {
            throw .signature("the \(algorithm.rawValue) signature does not verify with the provider's keys at \(RedactedURL(jwksURI))")
        }
    }
}
