package import Foundation

/// An OpenID Connect ID token (a JWS in compact form) and the claims this package checks.
///
/// The token is decoded, never printed: `description` names only the issuer and subject.
package struct IDToken: Sendable, CustomStringConvertible {
    /// The compact serialisation as received.
    let compact: String
    /// The `iss` claim.
    package let issuer: String
    /// The `aud` claim (a string or an array in the token).
    package let audiences: [String]
    /// The `exp` claim.
    package let expirationDate: Date
    /// The `nonce` claim, if any.
    package let nonce: String?
    /// The `sub` claim (required: OIDC Core §2).
    package let subject: String?
    /// The `iat` claim (required: OIDC Core §2).
    package let issuedAt: Date?
    /// A human-facing user name: `preferred_username`, `upn`, `email` or `name`, whichever comes first.
    package let username: String?
    /// The `tid` claim (Microsoft Entra ID: the directory the user signed in to, a GUID), when given.
    package let tenantID: String?
    /// The protected header's `alg`.
    package let algorithm: String?
    /// The protected header's `kid`, when given.
    package let keyID: String?
    /// Whether the protected header has a `crit` parameter (any value: this package understands no extension).
    package let hasCriticalHeader: Bool
    /// The protected header's `typ`: nil when absent, `.null` kept as a value that is no string.
    let type: JSONValue?
    /// The `nbf` claim: nil when absent (a value that is no number is refused by `validate`).
    let notBefore: JSONValue?
    /// The `azp` claim (authorized party): nil when absent.
    let authorizedParty: JSONValue?
    /// What the signature covers: the first two parts as received, with the dot between them.
    package var signingInput: Data {
        Data(compact.split(separator: ".", omittingEmptySubsequences: false).prefix(2).joined(separator: ".").utf8)
    }
    /// The decoded signature (empty for `alg: none`).
    package let signature: [UInt8]

    package var description: String { "ID token (iss \(issuer), sub \(subject ?? "?"))" }

    /// Decodes the header and payload; the signature is not checked here.
    package init(compact: String) throws(IDTokenError) {
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .malformed("it does not have three dot-separated parts") }
        guard let headerBytes = Base64URL.decode(parts[0]), let payloadBytes = Base64URL.decode(parts[1]),
            let signatureBytes = Base64URL.decode(parts[2]),
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
        self.issuedAt = payload["iat"]?.doubleValue.map(Date.init(timeIntervalSince1970:))
        self.keyID = header["kid"]?.stringValue
        self.signature = signatureBytes
        self.username =
            ["preferred_username", "upn", "email", "name"].lazy.compactMap { payload[$0]?.stringValue }.first
        self.algorithm = header["alg"]?.stringValue
        self.tenantID = payload["tid"]?.stringValue
        self.hasCriticalHeader = header["crit"] != nil
        self.type = header["typ"]
        self.notBefore = payload["nbf"]
        self.authorizedParty = payload["azp"]
    }

    /// Checks the header and the claims a client must check (OIDC Core §3.1.3.7, RFC 7515 §4.1.11, RFC 7519 §4.1.5).
    ///
    /// The header: no `crit` (RFC 7515 §4.1.11: an extension the recipient does not understand makes the token
    /// invalid, and this package understands none; an empty list is not allowed either), `typ` absent or `JWT` in
    /// any case (an RFC 9068 access token, `at+jwt`, is no ID token). The claims: `aud` holds the client, `azp`,
    /// when present, is the client, `nonce`, `iss`, `exp`, `nbf` and `iat` (the last three with `clockSkew`).
    ///
    /// - Parameters:
    ///   - clientID: must be among the audiences.
    ///   - nonce: the nonce sent in the authorization request; must match exactly.
    ///   - expectedIssuer: when known, must equal `iss` exactly.
    ///   - now: the current time.
    ///   - clockSkew: tolerated difference between this clock and the server's.
    ///   - maximumAge: how long before `now` the token may have been issued (`iat`), beyond the skew.
    package func validate(
        clientID: String, nonce expectedNonce: String?, expectedIssuer: String?, now: Date,
        clockSkew: Duration = .seconds(120), maximumAge: Duration = .seconds(600)
    ) throws(IDTokenError) {
        if hasCriticalHeader {
            throw .headerRejected(
                "crit",
                "it lists extensions the recipient must understand, and this client understands none, so the token is invalid even with an empty list (RFC 7515 §4.1.11)"
            )
        }
        if let type, type.stringValue?.lowercased() != "jwt" {
            let shown = type.stringValue.map { DisplayText.neutralised($0, limit: 40) } ?? "a value that is no string"
            throw .headerRejected(
                "typ", "it is \(shown), not JWT: the token is not an ID token (an access token is at+jwt, RFC 9068)")
        }
        guard audiences.contains(clientID) else {
            throw .claimMismatch("aud", "the token is not meant for client \(clientID)")
        }
        if let authorizedParty, authorizedParty.stringValue != clientID {
            let shown =
                authorizedParty.stringValue.map { DisplayText.neutralised($0, limit: 200) }
                ?? "a value that is no string"
            throw .claimMismatch(
                "azp", "the token was issued to \(shown), not to client \(clientID) (OpenID Connect Core §3.1.3.7)")
        }
        if let expectedNonce, nonce != expectedNonce {
            throw .claimMismatch("nonce", "the nonce does not match the one this sign-in sent (possible replay)")
        }
        if let expectedIssuer, issuer != expectedIssuer {
            throw .claimMismatch(
                "iss", "issued by \(DisplayText.neutralised(issuer, limit: 200)), expected \(expectedIssuer)")
        }
        if expirationDate.addingTimeInterval(clockSkew.timeInterval) < now {
            throw .claimMismatch(
                "exp", "the token expired at \(expirationDate.ISO8601Format()); check this machine's clock")
        }
        if let notBefore {
            guard let seconds = notBefore.doubleValue else {
                throw .claimMismatch("nbf", "it is not a number of seconds (RFC 7519 §4.1.5)")
            }
            let start = Date(timeIntervalSince1970: seconds)
            if start.timeIntervalSince(now) > clockSkew.timeInterval {
                throw .claimMismatch(
                    "nbf",
                    "the token is not valid before \(start.ISO8601Format()), in the future; check this machine's clock")
            }
        }
        guard let subject, !subject.isEmpty else {
            throw .claimMismatch("sub", "the token has no subject (OpenID Connect Core §2 requires one)")
        }
        guard let issuedAt else {
            throw .claimMismatch("iat", "the token has no issue time (OpenID Connect Core §2 requires one)")
        }
        if issuedAt.timeIntervalSince(now) > clockSkew.timeInterval {
            throw .claimMismatch(
                "iat", "the token was issued at \(issuedAt.ISO8601Format()), in the future; check this machine's clock")
        }
        if now.timeIntervalSince(issuedAt) > (maximumAge + clockSkew).timeInterval {
            throw .claimMismatch(
                "iat",
                "the token was issued at \(issuedAt.ISO8601Format()), too long ago to be a new one; check this machine's clock"
            )
        }
    }

    /// OIDC Core 12.2: a refreshed ID token is for the same sign-in as `previous` — same `iss`, `sub` and `aud`, and
    /// no other `nonce` — or it is refused (another user's token would switch identities).
    package func requireSameSignIn(as previous: IDToken) throws(IDTokenError) {
        if issuer != previous.issuer {
            throw .claimMismatch(
                "iss", "issued by \(DisplayText.neutralised(issuer, limit: 200)), not \(previous.issuer) as at sign-in")
        }
        if subject != previous.subject {
            throw .claimMismatch(
                "sub", "the token is for another user than the one signed in (OpenID Connect Core 12.2)")
        }
        if Set(audiences) != Set(previous.audiences) {
            throw .claimMismatch("aud", "the audiences differ from the sign-in's (OpenID Connect Core 12.2)")
        }
        if let nonce, nonce != previous.nonce {
            throw .claimMismatch("nonce", "the nonce differs from the sign-in's (OpenID Connect Core 12.2)")
        }
    }
}

/// An ID token that cannot be accepted.
package struct IDTokenError: Error, Sendable, CustomStringConvertible, CategorizedError {
    private let text: String

    private init(text: String) { self.text = text }

    package static func malformed(_ why: String) -> IDTokenError {
        IDTokenError(text: "the ID token is malformed" + MessagePart.given(": ", why))
    }
    package static func claimMismatch(_ claim: String, _ why: String) -> IDTokenError {
        IDTokenError(
            text: "the ID token's " + MessagePart.given("", claim, " ") + "claim was rejected"
                + MessagePart.given(": ", why))
    }

    package static func headerRejected(_ parameter: String, _ why: String) -> IDTokenError {
        IDTokenError(
            text: "the ID token's " + MessagePart.given("", parameter, " ") + "header was rejected"
                + MessagePart.given(": ", why))
    }

    package static func signature(_ why: String) -> IDTokenError {
        IDTokenError(text: "the ID token's signature was rejected" + MessagePart.given(": ", why))
    }
    package static func keys(_ why: String) -> IDTokenError {
        IDTokenError(text: "the ID token's signature cannot be checked" + MessagePart.given(": ", why))
    }

    public var category: ErrorCategory { .invalidContent }
    public var description: String { text }
}

extension Duration {
    /// The duration in seconds as a `TimeInterval`.
    package var timeInterval: TimeInterval {
        let parts = components
        return TimeInterval(parts.seconds) + TimeInterval(parts.attoseconds) / 1e18
    }
}
