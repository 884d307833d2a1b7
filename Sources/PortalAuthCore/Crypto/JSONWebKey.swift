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

    package var description: String {
        "\(keyType) key" + (keyID.map { " \(DisplayText.neutralised($0, limit: 80))" } ?? "")
    }

    /// The usable signing keys of a JWK Set document (`{"keys": [...]}`), and why the others were left out.
    ///
    /// Keys not meant for signatures (`use` other than `sig`, or `key_ops` without `verify`: RFC 7517 §4.2, §4.3)
    /// are passed over without a word; keys of another type, RSA keys whose exponent is not an odd number of at least 3
    /// (with `e = 1` the "signature" is the padded hash itself, which anyone can write) or whose modulus has fewer than
    /// 2048 bits, EC keys whose point is not on their named curve, keys whose `key_ops` is not an array of strings, and
    /// keys OpenSSL refuses are left out and named in ``JSONWebKeySet/skipped``.
    ///
    /// - Throws: `CryptoError` when the document is not a JWK Set or OpenSSL cannot be opened.
    package static func keySet(_ document: JSONValue) throws(CryptoError) -> JSONWebKeySet {
        guard let keys = document["keys"]?.arrayValue else { throw .invalidKey("the JWK Set has no \"keys\" array") }
        do { try OpenSSLLibrary.loadCrypto() } catch { throw .libraryUnavailable(error) }
        var set = JSONWebKeySet(keys: [], skipped: [])
        for (index, entry) in keys.prefix(100).enumerated() {
            guard let jwk = entry.objectValue else {
                set.skipped.append("entry \(index + 1) is not a JSON object")
                continue
            }
            switch key(from: jwk) {
            case .usable(let key): set.keys.append(key)
            case .notForSignatures: break
            case .unusable(let why):
                let name =
                    jwk["kid"]?.stringValue.map { "key \(DisplayText.neutralised($0, limit: 80))" }
                    ?? "key \(index + 1)"
                set.skipped.append("\(name): \(why)")
            }
        }
        return set
    }

    /// What one entry of a key set is.
    private enum Reading {
        case usable(JSONWebKey)
        /// An encryption key: not meant for signatures, nothing to say.
        case notForSignatures
        /// Meant for signatures, but not a key to trust; the reason.
        case unusable(String)
    }

    /// One key, or why it cannot be used to verify signatures.
    private static func key(from jwk: JSONObject) -> Reading {
        defer { pa_ERR_clear_error() }
        guard let type = jwk["kty"]?.stringValue else { return .unusable("it has no kty") }
        // RFC 7517 §4.2 and §4.3: a key for encryption (`use`), or whose `key_ops` lack `verify`, checks no signature.
        if let use = jwk["use"]?.stringValue, use != "sig" { return .notForSignatures }
        if let operations = jwk["key_ops"], operations != .null {
            guard let names = operations.arrayValue?.compactMap(\.stringValue),
                names.count == operations.arrayValue?.count
            else { return .unusable("its key_ops is not an array of strings") }
            if !names.contains("verify") { return .notForSignatures }
        }
        func bytes(_ name: String) -> [UInt8]? { jwk[name]?.stringValue.flatMap { Base64URL.decode(Substring($0)) } }
        let curve = jwk["crv"]?.stringValue
        var made: OpaquePointer?
        switch type {
        case "RSA":
            guard let n = bytes("n"), let e = bytes("e") else { return .unusable("its n or e is not base64url") }
            if let weakness = rsaWeakness(modulus: n, exponent: e) { return .unusable(weakness) }
            made = pa_rsa_public_key(n, n.count, e, e.count)
        case "EC":
            let groups = ["P-256": ("prime256v1", 32), "P-384": ("secp384r1", 48), "P-521": ("secp521r1", 66)]
            guard let curve, let (group, size) = groups[curve] else {
                return .unusable("its curve is not P-256, P-384 or P-521")
            }
            guard let x = bytes("x"), let y = bytes("y"), x.count == size, y.count == size else {
                return .unusable("its x and y are not \(size)-byte coordinates of \(curve)")
            }
            let point = [0x04] + x + y
            made = pa_ec_public_key(group, point, point.count)
            if made == nil { return .unusable("its point is not on the curve \(curve)") }
        case "OKP":
            guard let curve, ["Ed25519", "Ed448"].contains(curve), let x = bytes("x") else {
                return .unusable("it is not an Ed25519 or Ed448 key")
            }
            made = pa_raw_public_key(curve.uppercased(), x, x.count)
        default:
            return .unusable("its type \(DisplayText.neutralised(type, limit: 20)) is not RSA, EC or OKP")
        }
        guard let made else { return .unusable("OpenSSL cannot make a key of it") }
        return .usable(
            JSONWebKey(
                keyType: type, keyID: jwk["kid"]?.stringValue, algorithm: jwk["alg"]?.stringValue, curve: curve,
                key: made))
    }

    /// Why an RSA public key (big-endian `n` and `e`) is no key to trust, or nil: the exponent must be odd and at
    /// least 3 (RFC 8017 §3.1; with 1 a signature is the padded hash itself, and an even one is no RSA key), the
    /// modulus at least 2048 bits (NIST SP 800-131A, RFC 8725 §3.5).
    static func rsaWeakness(modulus: [UInt8], exponent: [UInt8]) -> String? {
        let e = exponent.drop { $0 == 0 }
        let isOddAndAtLeastThree = (e.last ?? 0) & 1 == 1 && (e.count > 1 || (e.last ?? 0) >= 3)
        if !isOddAndAtLeastThree {
            let shown =
                e.count <= 8 ? "\(e.reduce(UInt64(0)) { $0 << 8 | UInt64($1) })" : "an even number of \(e.count) bytes"
            return
                "its exponent e is \(shown), not an odd number of at least 3 (such a key lets anyone forge a signature)"
        }
        let n = modulus.drop { $0 == 0 }
        let bits = n.first.map { (n.count - 1) * 8 + (8 - $0.leadingZeroBitCount) } ?? 0
        if bits < 2048 { return "its modulus n has \(bits) bits, fewer than 2048" }
        return nil
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

/// The usable keys of a JWK Set (``JSONWebKey/keySet(_:)``) and the keys left out, each with why.
package struct JSONWebKeySet: Sendable {
    /// The keys signatures are checked with.
    package var keys: [JSONWebKey]
    /// One line per key left out, such as `key rsa-1: its exponent e is 1, not an odd number of at least 3 …`.
    package var skipped: [String]
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
