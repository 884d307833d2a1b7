/// A PKCE pair (RFC 7636): a secret verifier kept by the client and its S256 challenge sent to the server.
package struct PKCE: Sendable {
    /// The secret verifier: 32 random octets, base64url (43 characters of `[A-Za-z0-9-_]`).
    package let verifier: String
    /// `BASE64URL(SHA256(ASCII(verifier)))`.
    package let challenge: String
    /// Always `S256`; `plain` is never used.
    package let method = "S256"

    /// A fresh pair from OpenSSL's random generator.
    package static func generate() throws(CryptoError) -> PKCE {
        try PKCE(verifier: SecureRandom.token(byteCount: 32))
    }

    /// The pair for a known verifier (tests use RFC 7636's Appendix B vector).
    package init(verifier: String) throws(CryptoError) {
        self.verifier = verifier
        self.challenge = Base64URL.encode(try SHA256Digest.hash(Array(verifier.utf8)))
    }
}
