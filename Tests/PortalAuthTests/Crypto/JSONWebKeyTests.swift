import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthCore

/// Keys and signed tokens made by `Fixtures/jws/make-fixtures.py` (jwcrypto), read from `Fixtures/jws/fixtures.json`.
enum JWSFixtures {
    static let document: JSONValue = {
        let url = FixtureFiles.root.appendingPathComponent("jws").appendingPathComponent("fixtures.json")
        // A missing fixture is a broken checkout: fail loudly.
        return try! JSONValue.parse(try! Data(contentsOf: url))
    }()

    /// The token signed as `name` ("RS256", "ES256-bad", …).
    static func token(_ name: String) -> String { document["tokens"]?[name]?.stringValue ?? "missing fixture \(name)" }

    /// A JWK Set of the fixtures ("jwks": RSA rsa-1, EC ec-1, Ed25519 ed-1; "jwksRotated": rsa-1, rsa-2, ec-1).
    static func keySet(_ name: String) -> JSONValue { document[name] ?? .null }

    /// The JWK Set as served.
    static func keySetText(_ name: String) -> String { keySet(name).serialized(indent: 0) }

    /// The clock the fixtures' claims fit (iat 1 799 999 990, exp 1 800 003 600).
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
}

@Suite("JSON Web Keys and JWS signatures (OpenSSL)")
struct JSONWebKeyTests {
    static func keys(_ name: String = "jwks") throws -> [JSONWebKey] {
        try JSONWebKey.keySet(JWSFixtures.keySet(name)).keys
    }

    @Test(
        "each algorithm verifies with the key named by kid",
        arguments: [
            ("RS256", "rsa-1"), ("PS256", "rsa-1"), ("ES256", "ec-1"), ("EdDSA", "ed-1"),
        ])
    func verifies(name: String, kid: String) throws {
        let token = try IDToken(compact: JWSFixtures.token(name))
        let algorithm = try #require(token.algorithm.flatMap(JWSAlgorithm.init(rawValue:)))
        #expect(token.keyID == kid)
        let key = try #require(try Self.keys().first { $0.keyID == kid })
        #expect(key.verifies(token.signature, of: token.signingInput, algorithm: algorithm))
        // Any other key of the set does not.
        for other in try Self.keys() where other.keyID != kid {
            #expect(!other.verifies(token.signature, of: token.signingInput, algorithm: algorithm))
        }
    }

    @Test(
        "a changed signature or a changed payload does not verify (rp-id_token-bad-sig-*)",
        arguments: ["RS256", "PS256", "ES256", "EdDSA"])
    func tampered(name: String) throws {
        let bad = try IDToken(compact: JWSFixtures.token("\(name)-bad"))
        let algorithm = try #require(JWSAlgorithm(rawValue: name))
        let keys = try Self.keys()
        #expect(!keys.contains { $0.verifies(bad.signature, of: bad.signingInput, algorithm: algorithm) })

        let good = try IDToken(compact: JWSFixtures.token(name))
        var input = good.signingInput
        input[input.count - 1] ^= 0x01
        #expect(!keys.contains { $0.verifies(good.signature, of: input, algorithm: algorithm) })
    }

    @Test("RS256 is not checked with PKCS#1 padding under the PS256 name, nor with an EC key")
    func algorithmConfusion() throws {
        let token = try IDToken(compact: JWSFixtures.token("RS256"))
        let rsa = try #require(try Self.keys().first { $0.keyID == "rsa-1" })
        #expect(!rsa.verifies(token.signature, of: token.signingInput, algorithm: .ps256))
        let ec = try #require(try Self.keys().first { $0.keyID == "ec-1" })
        #expect(!ec.fits(.rs256))
        #expect(!ec.verifies(token.signature, of: token.signingInput, algorithm: .rs256))
    }

    /// The fixtures' key of type `type` ("RSA", "EC", "OKP"), as a JSON object.
    static func fixtureKey(_ type: String) throws -> JSONObject {
        guard case .array(let keys)? = JWSFixtures.keySet("jwks")["keys"],
            case .object(let key)? = keys.first(where: { $0["kty"]?.stringValue == type })
        else { throw CryptoError.invalidKey("the fixtures have no \(type) key") }
        return key
    }

    @Test(
        "unusable keys are left out, and each is named with why: unknown types, EC points off the curve, curves other than the named ones; encryption keys silently"
    )
    func unusableKeys() throws {
        #expect(try Self.keys("jwksSmall").isEmpty)
        var ec = try Self.fixtureKey("EC")
        var flipped = Base64URL.decode(Substring(ec["y"]?.stringValue ?? "")) ?? []
        flipped[flipped.count - 1] ^= 0x01
        ec["y"] = .string(Base64URL.encode(flipped))
        ec["kid"] = .string("off-curve")
        var encryption = try Self.fixtureKey("EC")
        encryption["use"] = .string("enc")
        var otherCurve = try Self.fixtureKey("EC")
        otherCurve["crv"] = .string("secp256k1")
        otherCurve["kid"] = .string("k1")
        var shortCoordinates = try Self.fixtureKey("EC")
        shortCoordinates["crv"] = .string("P-384")
        shortCoordinates["kid"] = .string("wrong-size")
        let document: JSONValue = .object([
            "keys": .array([
                .object(ec), .object(encryption), .object(["kty": .string("oct"), "k": .string("c2VjcmV0")]),
                .string("not a key"),
                .object(otherCurve), .object(shortCoordinates),
            ])
        ])
        let set = try JSONWebKey.keySet(document)
        #expect(set.keys.isEmpty)
        #expect(set.skipped.count == 5, "\(set.skipped)")
        #expect(
            set.skipped.contains { $0.hasPrefix("key off-curve:") && $0.contains("not on the curve P-256") },
            "\(set.skipped)")
        #expect(
            set.skipped.contains { $0.hasPrefix("key k1:") && $0.contains("not P-256, P-384 or P-521") },
            "\(set.skipped)")
        #expect(
            set.skipped.contains { $0.hasPrefix("key wrong-size:") && $0.contains("48-byte coordinates of P-384") },
            "\(set.skipped)")
        #expect(throws: CryptoError.self) { try JSONWebKey.keySet(.object(["no-keys": .array([])])) }
        // The good EC key stays usable, for ES256 only.
        let good = try #require(
            try JSONWebKey.keySet(.object(["keys": .array([.object(try Self.fixtureKey("EC"))])])).keys.first)
        #expect(good.fits(.es256) && !good.fits(.es384) && !good.fits(.es512))
    }

    @Test(
        "a key whose key_ops lack verify, or whose use is enc, verifies no signature (RFC 7517 §4.2, §4.3)",
        arguments: [
            (#"{"key_ops": ["encrypt"]}"#, false), (#"{"key_ops": ["sign", "decrypt"]}"#, false),
            (#"{"key_ops": []}"#, false), (#"{"use": "enc"}"#, false), (#"{"key_ops": ["sign", "verify"]}"#, true),
            (#"{"use": "sig"}"#, true), (#"{"key_ops": null}"#, true),
        ])
    func keyOperations(members: String, verifies: Bool) throws {
        var key = try Self.fixtureKey("RSA")
        for member in try JSONValue.parse(members).objectValue?.members ?? [] { key[member.key] = member.value }
        let set = try JSONWebKey.keySet(.object(["keys": .array([.object(key)])]))
        let token = try IDToken(compact: JWSFixtures.token("RS256"))
        #expect(
            set.keys.contains { $0.verifies(token.signature, of: token.signingInput, algorithm: .rs256) } == verifies)
        // Left out without a word: it is a key, only not one for signatures.
        #expect(set.skipped.isEmpty, "\(set.skipped)")
    }

    @Test("key_ops that is not an array of strings leaves the key out, named with why")
    func malformedKeyOperations() throws {
        var key = try Self.fixtureKey("RSA")
        key["key_ops"] = .string("verify")
        let set = try JSONWebKey.keySet(.object(["keys": .array([.object(key)])]))
        #expect(set.keys.isEmpty)
        #expect(
            set.skipped.count == 1 && set.skipped[0].contains("key_ops is not an array of strings"), "\(set.skipped)")
    }

    @Test(
        "RSA: the exponent must be odd and at least 3, the modulus 2048 bits or more (RFC 8017 §3.1, RFC 8725 §3.5)",
        arguments: [
            ([UInt8(1)], 2048, "exponent e is 1"), ([0], 2048, "exponent e is 0"), ([2], 2048, "exponent e is 2"),
            ([0, 0, 1], 2048, "exponent e is 1"),
            ([1, 0, 0], 2048, "exponent e is 65536"),
            (Array(repeating: 2, count: 9), 2048, "an even number of 9 bytes"),
            ([1, 0, 1], 2047, "2047 bits"), ([1, 0, 1], 1024, "1024 bits"),
        ])
    func weakRSA(exponent: [UInt8], bits: Int, reason: String) throws {
        let modulus = [0, 0] + [UInt8(1) << ((bits - 1) % 8)] + Array(repeating: 0xA5, count: (bits - 1) / 8)
        let weakness = try #require(JSONWebKey.rsaWeakness(modulus: modulus, exponent: exponent))
        #expect(weakness.contains(reason), "\(weakness)")
    }

    @Test(
        "RSA keys with e = 3 or 65537 and 2048 or 4096 bits are kept",
        arguments: [([UInt8(3)], 2048), ([1, 0, 1], 2048), ([0, 1, 0, 1], 4096)])
    func strongRSA(exponent: [UInt8], bits: Int) {
        let modulus = [UInt8(0x80)] + Array(repeating: 0xA5, count: bits / 8 - 1)
        #expect(JSONWebKey.rsaWeakness(modulus: modulus, exponent: exponent) == nil)
    }

    /// What anyone can sign with an RSA key whose exponent is 1: s¹ mod n = s, so the "signature" of RS256 is the
    /// EMSA-PKCS1-v1_5 encoding of the SHA-256 hash (RFC 8017 §9.2), as long as the modulus.
    static func paddedHash(of input: Data, length: Int) throws -> [UInt8] {
        let digestInfo: [UInt8] = [
            0x30, 0x31, 0x30, 0x0D, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04,
            0x20,
        ]
        let encoded = digestInfo + (try SHA256Digest.hash(input))
        return [0x00, 0x01] + Array(repeating: 0xFF, count: length - encoded.count - 3) + [0x00] + encoded
    }

    /// The fixtures' RSA key with exponent `e` (big-endian) and kid `weak`.
    static func rsaKey(exponent: [UInt8]) throws -> JSONObject {
        var rsa = try fixtureKey("RSA")
        rsa["e"] = .string(Base64URL.encode(exponent))
        rsa["kid"] = .string("weak")
        return rsa
    }

    /// An RS256 token for kid `weak` whose signature is the padded hash: valid for the key with e = 1.
    static func forgedForExponentOne() throws -> IDToken {
        let header = Base64URL.encode(Array(#"{"alg":"RS256","typ":"JWT","kid":"weak"}"#.utf8))
        let payload = Base64URL.encode(
            Array(IDTokenTests.payload(aud: .string("portal-auth-test"), nonce: nil).serialized().utf8))
        let length = Base64URL.decode(Substring(try fixtureKey("RSA")["n"]?.stringValue ?? ""))?.count ?? 0
        let signature = try paddedHash(of: Data((header + "." + payload).utf8), length: length)
        return try IDToken(compact: header + "." + payload + "." + Base64URL.encode(signature))
    }

    @Test("an RSA key with e = 1, under which the padded hash is a valid signature, is left out and named")
    func exponentOneLeftOut() throws {
        let set = try JSONWebKey.keySet(.object(["keys": .array([.object(try Self.rsaKey(exponent: [1]))])]))
        #expect(set.keys.isEmpty)
        #expect(
            set.skipped == [
                "key weak: its exponent e is 1, not an odd number of at least 3 (such a key lets anyone forge a signature)"
            ])
        // The same modulus with e = 65537 is kept, and the forged signature does not verify with it.
        let strong = try #require(
            try JSONWebKey.keySet(.object(["keys": .array([.object(try Self.rsaKey(exponent: [1, 0, 1]))])])).keys.first
        )
        let forged = try Self.forgedForExponentOne()
        #expect(!strong.verifies(forged.signature, of: forged.signingInput, algorithm: .rs256))
    }
}
