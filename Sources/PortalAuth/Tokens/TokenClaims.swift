public import Foundation
import PortalAuthCore

/// What a token says about itself, when it is a JWT: who issued it, for whom, to which client, with which scopes,
/// and when — the facts to read when a service refuses it (a proxy that wants another audience, an access token
/// without the scope an API needs).
///
/// Decoded from the token's payload without checking its signature (these are facts to show, not to trust); the
/// signature and the token itself are never kept. Text claims are the token's own words: neutralise them
/// before a terminal shows them. An opaque token (an ArcGIS portal's, most access tokens of some providers) has no
/// claims: `init(jwt:)` is nil.
///
/// ```swift
/// if let claims = TokenClaims(jwt: try await credential.tokenInfo.idToken ?? "") {
///     print(claims.issuer ?? "?", claims.audiences)
/// }
/// ```
public struct TokenClaims: Sendable, Equatable {
    /// `iss`: the issuer.
    public let issuer: String?
    /// `aud`: the audiences (one string or an array in the token).
    public let audiences: [String]
    /// `azp`: the authorized party, the client the token was issued to (OpenID Connect Core §2).
    public let authorizedParty: String?
    /// `client_id`: the client, as access tokens name it (RFC 9068 §2.2, RFC 8693 §4.3).
    public let clientID: String?
    /// `sub`: the subject.
    public let subject: String?
    /// The scopes: `scope` (a space-separated string, RFC 9068 §2.2.3) or `scp` (a string or an array, as Microsoft
    /// Entra writes them); empty when the token names none.
    public let scopes: [String]
    /// `iat`: when it was issued.
    public let issuedAt: Date?
    /// `nbf`: when it becomes valid.
    public let notBefore: Date?
    /// `exp`: when it expires.
    public let expirationDate: Date?
    /// The header's `typ` (`JWT`, or `at+jwt` for an RFC 9068 access token), when given.
    public let type: String?
    /// The header's `alg`: how it is signed (`RS256`, `ES256`, … or `none`).
    public let algorithm: String?

    /// The claims of `jwt`, a JWS in compact form (three base64url parts, a JSON object as payload); nil for anything
    /// else (an opaque token, an encrypted JWT).
    public init?(jwt: String) {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]),
            let payloadBytes = Base64URL.decode(parts[1]),
            let header = try? JSONValue.parse(Data(headerBytes)).objectValue,
            let payload = try? JSONValue.parse(Data(payloadBytes)).objectValue
        else { return nil }
        func date(_ name: String) -> Date? {
            guard let seconds = payload[name]?.doubleValue, seconds.isFinite, abs(seconds) < 1e15 else { return nil }
            return Date(timeIntervalSince1970: seconds)
        }
        func strings(_ value: JSONValue?) -> [String] {
            switch value {
            case .string(let text): return text.split(separator: " ").map(String.init)
            case .array(let items): return items.compactMap(\.stringValue)
            default: return []
            }
        }
        issuer = payload["iss"]?.stringValue
        switch payload["aud"] {
        case .string(let single): audiences = [single]
        case .array(let many): audiences = many.compactMap(\.stringValue)
        default: audiences = []
        }
        authorizedParty = payload["azp"]?.stringValue
        clientID = payload["client_id"]?.stringValue
        subject = payload["sub"]?.stringValue
        scopes = payload["scope"] != nil ? strings(payload["scope"]) : strings(payload["scp"])
        issuedAt = date("iat")
        notBefore = date("nbf")
        expirationDate = date("exp")
        type = header["typ"]?.stringValue
        algorithm = header["alg"]?.stringValue
    }
}
