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
    static func keys(_ name: String = "jwks") throws -> [JSONWebKey] { try JSONWebKey.keySet(JWSFixtures.keySet(name)) }

    @Test("each algorithm verifies with the key named by kid", arguments: [
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

    @Test("a changed signature or a changed payload does not verify (rp-id_token-bad-sig-*)", arguments: ["RS256", "PS256", "ES256", "EdDSA"])
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

    @Test("unusable keys are left out: encryption keys, unknown types, EC points off the curve, RSA under 2048 bits")
    func unusableKeys() throws {
        #expect(try Self.keys("jwksSmall").isEmpty)
        guard case .array(let keys)? = JWSFixtures.keySet("jwks")["keys"], case .object(var ec)? = keys.first(where: { $0["kty"]?.stringValue == "EC" })
        else { Issue.record("fixture"); return }
        var flipped = Base64URL.decode(Substring(ec["y"]?.stringValue ?? "")) ?? []
        flipped[flipped.count - 1] ^= 0x01
        ec["y"] = .string(Base64URL.encode(flipped))
        var encryption = ec
        encryption["use"] = .string("enc")
        let document: JSONValue = .object(["keys": .array([
            .object(ec), .object(encryption), .object(["kty": .string("oct"), "k": .string("c2VjcmV0")]), .string("not a key"),
        ])])
        #expect(try JSONWebKey.keySet(document).isEmpty)
        #expect(throws: CryptoError.self) { try JSONWebKey.keySet(.object(["no-keys": .array([])])) }
    }
}
