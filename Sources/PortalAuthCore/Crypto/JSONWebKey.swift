internal import CPortalAuthOpenSSL
package import Foundation

/// A public key of a JSON Web Key Set (RFC 7517) that ID tokens may be signed with: RSA (`n`, `e`), EC on P-256,
/// P-384 or P-521 (`x`, `y`), or OKP Ed25519/Ed448 (`x`). OpenSSL builds the key from those parts
/// (`EVP_PKEY_fromdata`) and checks signatures with it; nothing cryptographic is done here by hand.
package final class JSONWebKey: @unchecked Sendable, CustomStringConvertible {
    // @unchecked: the EVP_PKEY is made once and never changed; OpenSSL allows verifying with one key from several
    // threads, each with its own EVP_MD_CTX.
    /// `kty`: `RSA`, `EC` or `OKP`.
    let keyType: String
    /// `kid`, when given.
    package let keyID: String?
    /// `alg`, when given: the key is then used for that algorithm only.
    package let algorithm: String?
    /// `crv` for EC and OKP keys.
    let curve: String?
    private let key: OpaquePointer

    private init(keyType: String, keyID: String?, algorithm: String?, curve: String?, key: OpaquePointer) {
        self.keyType = keyType
        self.keyID = keyID
        self.algorithm = algorithm
        self.curve = curve
        self.key = key
    }

    deinit { pa_EVP_PKEY_free(key) }

    package var description: String { "\(keyType) key" + (keyID.map { " \(DisplayText.neutralised($0, limit: 80))" } ?? "") }

    /// The usable signing keys of a JWK Set document (`{"keys": [...]}`); keys for encryption (`use: enc`), of
    /// another type, or that OpenSSL refuses (a point off its curve, an RSA modulus under 2048 bits) are left out.
    ///
    /// - Throws: `CryptoError` when the document is not a JWK Set or OpenSSL cannot be opened.
    package static func keySet(_ document: JSONValue) throws(CryptoError) -> [JSONWebKey] {
        guard let keys = document["keys"]?.arrayValue else { throw .invalidKey("the JWK Set has no \"keys\" array") }
        do { try OpenSSLLibrary.loadCrypto() } catch { throw .libraryUnavailable(error) }
        return keys.prefix(100).compactMap { $0.objectValue.flatMap(key(from:)) }
    }

    /// One key, or nil when it cannot be used to verify signatures.
    private static func key(from jwk: JSONObject) -> JSONWebKey? {
        defer { pa_ERR_clear_error() }
        guard let type = jwk["kty"]?.stringValue else { return nil }
        if let use = jwk["use"]?.stringValue, use != "sig" { return nil }
        func bytes(_ name: String) -> [UInt8]? { jwk[name]?.stringValue.flatMap { Base64URL.decode(Substring($0)) } }
        let curve = jwk["crv"]?.stringValue
        var made: OpaquePointer?
        switch type {
        case "RSA":
            guard let n = bytes("n"), let e = bytes("e") else { return nil }
            made = pa_rsa_public_key(n, n.count, e, e.count)
            if let key = made, pa_EVP_PKEY_get_bits(key) < 2048 {
                pa_EVP_PKEY_free(key)
                return nil
            }
        case "EC":
            let groups = ["P-256": ("prime256v1", 32), "P-384": ("secp384r1", 48), "P-521": ("secp521r1", 66)]
            guard let curve, let (group, size) = groups[curve], let x = bytes("x"), let y = bytes("y"), x.count == size, y.count == size
            else { return nil }
            let point = [0x04] + x + y
            made = pa_ec_public_key(group, point, point.count)
        case "OKP":
            guard let curve, ["Ed25519", "Ed448"].contains(curve), let x = bytes("x") else { return nil }
            made = pa_raw_public_key(curve.uppercased(), x, x.count)
        default:
            return nil
        }
        guard let made else { return nil }
        return JSONWebKey(keyType: type, keyID: jwk["kid"]?.stringValue, algorithm: jwk["alg"]?.stringValue, curve: curve, key: made)
    }

    /// Whether this key can check a signature made with JWS algorithm `algorithm`.
    package func fits(_ algorithm: JWSAlgorithm) -> Bool {
        if let own = self.algorithm, own != algorithm.rawValue { return false }
        switch algorithm {
        case .rs256, .rs384, .rs512, .ps256, .ps384, .ps512: return keyType == "RSA"
        case .es256: return keyType == "EC" && curve == "P-256"
        case .es384: return keyType == "EC" && curve == "P-384"
        case .es512: return keyType == "EC" && curve == "P-521"
        case .edDSA: return keyType == "OKP"
        }
    }

    /// Whether `signature` is `algorithm`'s signature of `data` with this key (OpenSSL's `EVP_DigestVerify`).
    package func verifies(_ signature: [UInt8], of data: Data, algorithm: JWSAlgorithm) -> Bool {
        guard fits(algorithm) else { return false }
        defer { pa_ERR_clear_error() }
        let result = data.withUnsafeBytes { input in
            signature.withUnsafeBufferPointer { signed in
                pa_verify_signature(
                    key, Int32(algorithm.digestBits), algorithm.isPSS ? 1 : 0, algorithm.isECDSA ? 1 : 0,
                    input.bindMemory(to: UInt8.self).baseAddress, input.count, signed.baseAddress, signed.count)
            }
        }
        return result == 1
    }
}

/// The JWS algorithms (RFC 7518 §3, RFC 8037) an ID token's signature is checked with. `HS*` (a key shared with
/// a public client is no secret) and `none` are not among them.
package enum JWSAlgorithm: String, Sendable, CaseIterable {
    case rs256 = "RS256"
    case rs384 = "RS384"
    case rs512 = "RS512"
    case ps256 = "PS256"
    case ps384 = "PS384"
    case ps512 = "PS512"
    case es256 = "ES256"
    case es384 = "ES384"
    case es512 = "ES512"
    case edDSA = "EdDSA"

    /// The SHA-2 digest size, or 0 for EdDSA (which hashes by itself).
    var digestBits: Int {
        switch self {
        case .rs256, .ps256, .es256: 256
        case .rs384, .ps384, .es384: 384
        case .rs512, .ps512, .es512: 512
        case .edDSA: 0
        }
    }

    var isPSS: Bool { [.ps256, .ps384, .ps512].contains(self) }
    var isECDSA: Bool { [.es256, .es384, .es512].contains(self) }
}
