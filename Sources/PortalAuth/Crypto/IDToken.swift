import Foundation

/// An OpenID Connect ID token (a JWS in compact form) and the claims this package checks.
///
/// The token is decoded, never printed: `description` names only the issuer and subject.
struct IDToken: Sendable, CustomStringConvertible {
    /// The compact serialisation as received.
    let compact: String
    /// The `iss` claim.
    let issuer: String
    /// The `aud` claim (a string or an array in the token).
    let audiences: [String]
    /// The `exp` claim.
    let expirationDate: Date
    /// The `nonce` claim, if any.
    let nonce: String?
    /// The `sub` claim.
    let subject: String?
    /// A human-facing user name: `preferred_username`, `upn`, `email` or `name`, whichever comes first.
    let username: String?
    /// The protected header's `alg`.
    let algorithm: String?

    var description: String { "ID token (iss \(issuer), sub \(subject ?? "?"))" }

    /// Decodes the header and payload; the signature is not checked here.
    init(compact: String) throws(IDTokenError) {
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .malformed("it does not have three dot-separated parts") }
        guard let headerBytes = Base64URL.decode(parts[0]), let payloadBytes = Base64URL.decode(parts[1]),
              let header = try? JSONValue.parse(Data(headerBytes)).objectValue,
              let payload = try? JSONValue.parse(Data(payloadBytes)).objectValue
        else { throw .malformed("its header or payload is not base64url-encoded JSON") }
        guard let issuer = payload["iss"]?.stringValue else { throw .malformed("it has no iss claim") }
        guard let exp = payload["exp"]?.doubleValue else { throw .malformed("it has no numeric exp claim") }
        switch payload["aud"] {
        case .string(let single): audiences = [single]
        case .array(let many): audiences = many.compactMap(\.stringValue)
        default: throw .malformed("it has no aud claim")
        }
        self.compact = compact
        self.issuer = issuer
        self.expirationDate = Date(timeIntervalSince1970: exp)
        self.nonce = payload["nonce"]?.stringValue
        self.subject = payload["sub"]?.stringValue
        self.username = ["preferred_username", "upn", "email", "name"].lazy.compactMap { payload[$0]?.stringValue }.first
        self.algorithm = header["alg"]?.stringValue
    }

    /// Checks the claims a client must check (OIDC Core §3.1.3.7).
    ///
    /// - Parameters:
    ///   - clientID: must be among the audiences.
    ///   - nonce: the nonce sent in the authorization request; must match exactly.
    ///   - expectedIssuer: when known, must equal `iss` exactly.
    ///   - now: the current time.
    ///   - clockSkew: tolerated difference between this clock and the server's.
    func validate(clientID: String, nonce expectedNonce: String?, expectedIssuer: String?, now: Date, clockSkew: Duration = .seconds(120)) throws(IDTokenError) {
        guard audiences.contains(clientID) else { throw .claimMismatch("aud", "the token is not meant for client \(clientID)") }
        if let expectedNonce, nonce != expectedNonce {
            throw .claimMismatch("nonce", "the nonce does not match the one this sign-in sent (possible replay)")
        }
        if let expectedIssuer, issuer != expectedIssuer {
            throw .claimMismatch("iss", "issued by \(issuer), expected \(expectedIssuer)")
        }
        if expirationDate.addingTimeInterval(clockSkew.timeInterval) < now {
            throw .claimMismatch("exp", "the token expired at \(expirationDate.ISO8601Format()); check this machine's clock")
        }
    }
}

/// An ID token that cannot be accepted.
public struct IDTokenError: Error, Sendable, CustomStringConvertible, CategorizedError {
    private let text: String

    private init(text: String) { self.text = text }

    static func malformed(_ why: String) -> IDTokenError { IDTokenError(text: "the ID token is malformed: \(why)") }
    static func claimMismatch(_ claim: String, _ why: String) -> IDTokenError {
        IDTokenError(text: "the ID token's \(claim) claim was rejected: \(why)")
    }

    public var category: ErrorCategory { .invalidContent }
    public var description: String { text }
}

extension Duration {
    /// The duration in seconds as a `TimeInterval`.
    var timeInterval: TimeInterval {
        let parts = components
        return TimeInterval(parts.seconds) + TimeInterval(parts.attoseconds) / 1e18
    }
}
