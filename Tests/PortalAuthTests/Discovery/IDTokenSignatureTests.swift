import Foundation
import Testing
@testable import PortalAuth
import PortalAuthTesting
@testable import PortalAuthCore
@testable import PortalAuthTransport

/// The ID token's signature against the provider's `jwks_uri` (the OpenID Foundation's rp-id_token-bad-sig-*,
/// rp-id_token-kid-absent-*, rp-key-rotation-*, rp-discovery-jwks_uri-keys cases), with the fixtures of
/// `Fixtures/jws/` and a scripted key endpoint.
@Suite("ID token signatures against the provider's JWKS")
struct IDTokenSignatureTests {
    static let jwksURI = URL(string: "https://idp.example/o/.well-known/jwks.json")!
    static let tokenURL = URL(string: "https://idp.example/o/token/")!

    /// A key endpoint serving `sets` in turn (the last one repeated), with `cacheControl` when given.
    static func keyEndpoint(_ sets: [String], cacheControl: String? = nil) -> ScriptedHTTPClient {
        ScriptedHTTPClient { index, request in
            var headers: TransportHeaders = [("Content-Type", "application/json")]
            if let cacheControl { headers.add(name: "Cache-Control", value: cacheControl) }
            return TransportResponse(
                statusCode: 200, headers: headers,
                body: Data(JWSFixtures.keySetText(sets[min(index, sets.count - 1)]).utf8), url: request.url)
        }
    }

    static func verify(
        _ name: String, client: ScriptedHTTPClient, keys: ProviderKeys = ProviderKeys(), now: Date = JWSFixtures.now
    ) async throws {
        try await IDTokenSignature.verify(
            IDToken(compact: JWSFixtures.token(name)), jwksURI: jwksURI, signsWithNone: false, tokenURL: tokenURL,
            httpClient: client,
            keys: keys, now: now)
    }

    @Test(
        "good signatures verify with the keys fetched from jwks_uri (rp-discovery-jwks_uri-keys)",
        arguments: ["RS256", "PS256", "ES256", "EdDSA"])
    func good(name: String) async throws {
        let client = Self.keyEndpoint(["jwks"])
        try await Self.verify(name, client: client)
        #expect(client.requests.map(\.url) == [Self.jwksURI])
    }

    @Test(
        "a bad signature is refused (rp-id_token-bad-sig-rs256, -es256, and PS256, EdDSA)",
        arguments: ["RS256-bad", "ES256-bad", "PS256-bad", "EdDSA-bad"])
    func bad(name: String) async throws {
        let error = await #expect(throws: IDTokenError.self) {
            try await Self.verify(name, client: Self.keyEndpoint(["jwks"]))
        }
        #expect(error?.description.contains("does not verify") == true, "\(String(describing: error))")
    }

    @Test(
        "without kid, every key of the algorithm's type is tried (rp-id_token-kid-absent-multiple-jwks)",
        arguments: ["RS256-no-kid", "ES256-no-kid"])
    func kidAbsent(name: String) async throws {
        try await Self.verify(name, client: Self.keyEndpoint(["jwksRotated"]))
    }

    @Test(
        "a token signed with a new key: the keys are fetched once more, and it verifies (rp-key-rotation-op-sign-key)")
    func rotation() async throws {
        let client = Self.keyEndpoint(["jwks", "jwksRotated"], cacheControl: "max-age=3600")
        let keys = ProviderKeys()
        try await Self.verify("RS256", client: client, keys: keys)
        try await Self.verify("RS256-rotated", client: client, keys: keys, now: JWSFixtures.now.addingTimeInterval(5))
        #expect(client.count == 2)
        // Kept since: no further fetch.
        try await Self.verify("RS256-rotated", client: client, keys: keys, now: JWSFixtures.now.addingTimeInterval(6))
        #expect(client.count == 2)
    }

    @Test("an unknown kid makes one new fetch, never a loop; and none within the re-fetch interval")
    func unknownKidNoLoop() async throws {
        let client = Self.keyEndpoint(["jwks"], cacheControl: "max-age=3600")
        let keys = ProviderKeys(refetchInterval: .seconds(10))
        try await Self.verify("RS256", client: client, keys: keys)
        let first = await #expect(throws: IDTokenError.self) {
            try await Self.verify(
                "RS256-rotated", client: client, keys: keys, now: JWSFixtures.now.addingTimeInterval(20))
        }
        #expect(first?.description.contains("rsa-2") == true, "\(String(describing: first))")
        #expect(client.count == 2)
        await #expect(throws: IDTokenError.self) {
            try await Self.verify(
                "RS256-rotated", client: client, keys: keys, now: JWSFixtures.now.addingTimeInterval(25))
        }
        #expect(client.count == 2, "fetched again within the re-fetch interval")
    }

    @Test("the cache follows the HTTP headers: max-age keeps the keys, no-store fetches every time")
    func cacheHeaders() async throws {
        let kept = Self.keyEndpoint(["jwks"], cacheControl: "public, max-age=60")
        let keys = ProviderKeys()
        try await Self.verify("RS256", client: kept, keys: keys)
        try await Self.verify("ES256", client: kept, keys: keys, now: JWSFixtures.now.addingTimeInterval(59))
        #expect(kept.count == 1)
        try await Self.verify("ES256", client: kept, keys: keys, now: JWSFixtures.now.addingTimeInterval(61))
        #expect(kept.count == 2)

        let uncached = Self.keyEndpoint(["jwks"], cacheControl: "no-store")
        let other = ProviderKeys()
        try await Self.verify("RS256", client: uncached, keys: other)
        try await Self.verify("RS256", client: uncached, keys: other)
        #expect(uncached.count == 2)
        #expect(ProviderKeys.lifetime([("Cache-Control", "max-age=999999")], now: JWSFixtures.now) == 86_400)
        #expect(ProviderKeys.lifetime([], now: JWSFixtures.now) == 300)
        #expect(ProviderKeys.lifetime([("Expires", "Fri, 15 Jan 2027 08:20:00 GMT")], now: JWSFixtures.now) == 1_200)
    }

    @Test("alg none is refused unless the provider's discovery says it signs with none, and then only over https")
    func unsigned() async throws {
        let payload = Base64URL.encode(Array(IDTokenTests.payload().serialized(indent: 0).utf8))
        let token = try IDToken(compact: Base64URL.encode(Array(#"{"alg":"none"}"#.utf8)) + "." + payload + ".")
        let client = Self.keyEndpoint(["jwks"])
        await #expect(throws: IDTokenError.self) {
            try await IDTokenSignature.verify(
                token, jwksURI: Self.jwksURI, signsWithNone: false, tokenURL: Self.tokenURL, httpClient: client,
                keys: ProviderKeys())
        }
        await #expect(throws: IDTokenError.self) {
            try await IDTokenSignature.verify(
                token, jwksURI: nil, signsWithNone: false, tokenURL: Self.tokenURL, httpClient: client,
                keys: ProviderKeys())
        }
        await #expect(throws: IDTokenError.self) {
            try await IDTokenSignature.verify(
                token, jwksURI: Self.jwksURI, signsWithNone: true,
                tokenURL: URL(string: "http://127.0.0.1:8000/o/token/")!, httpClient: client,
                keys: ProviderKeys())
        }
        try await IDTokenSignature.verify(
            token, jwksURI: Self.jwksURI, signsWithNone: true, tokenURL: Self.tokenURL, httpClient: client,
            keys: ProviderKeys())
        #expect(client.count == 0)
    }

    @Test(
        "fail closed: with no key set known, a token whose signature does not verify is refused, not taken on the token endpoint's word",
        arguments: ["RS256-bad", "RS256"])
    func noKeySet(name: String) async throws {
        let client = Self.keyEndpoint(["jwks"])
        // Accepted before issue 36 (rule 6's TLS exception): a forged token signed in.
        let error = await #expect(throws: IDTokenError.self) {
            try await IDTokenSignature.verify(
                IDToken(compact: JWSFixtures.token(name)), jwksURI: nil, signsWithNone: false, tokenURL: Self.tokenURL,
                httpClient: client,
                keys: ProviderKeys(), now: JWSFixtures.now)
        }
        #expect(error?.description.contains("signing keys are unknown") == true, "\(String(describing: error))")
        #expect(
            error?.description.contains("--") == false, "a library message names no flag: \(String(describing: error))")
        #expect(client.count == 0)
    }

    @Test("a recorded key set address that is not https (a changed store) is not fetched: the token is refused")
    func plainHTTPKeySet() async throws {
        let client = Self.keyEndpoint(["jwks"])
        let error = await #expect(throws: IDTokenError.self) {
            try await IDTokenSignature.verify(
                IDToken(compact: JWSFixtures.token("RS256")), jwksURI: URL(string: "http://idp.example/o/jwks.json")!,
                signsWithNone: false,
                tokenURL: Self.tokenURL, httpClient: client, keys: ProviderKeys(), now: JWSFixtures.now)
        }
        #expect(error?.description.contains("cannot be used") == true, "\(String(describing: error))")
        #expect(client.count == 0)
    }

    @Test("alg none stays the one exception: listed by the provider and over https, it passes with no key set")
    func unsignedWithoutKeySet() async throws {
        let payload = Base64URL.encode(Array(IDTokenTests.payload().serialized(indent: 0).utf8))
        let token = try IDToken(compact: Base64URL.encode(Array(#"{"alg":"none"}"#.utf8)) + "." + payload + ".")
        try await IDTokenSignature.verify(
            token, jwksURI: nil, signsWithNone: true, tokenURL: Self.tokenURL, httpClient: Self.keyEndpoint(["jwks"]),
            keys: ProviderKeys())
    }

    @Test(
        "a token forged for an RSA key with e = 1 in the provider's key set is refused, and the key left out is named")
    func exponentOne() async throws {
        let weakSet = JSONValue.object(["keys": .array([.object(try JSONWebKeyTests.rsaKey(exponent: [1]))])])
            .serialized(indent: 0)
        let client = ScriptedHTTPClient { _, request in
            TransportResponse(
                statusCode: 200, headers: [("Content-Type", "application/json")], body: Data(weakSet.utf8),
                url: request.url)
        }
        let forged = try JSONWebKeyTests.forgedForExponentOne()
        // Accepted before issue 36: OpenSSL checks s^1 mod n against the padding, which the forger wrote.
        let error = await #expect(throws: IDTokenError.self) {
            try await IDTokenSignature.verify(
                forged, jwksURI: Self.jwksURI, signsWithNone: false, tokenURL: Self.tokenURL, httpClient: client,
                keys: ProviderKeys(), now: JWSFixtures.now)
        }
        #expect(error?.description.contains("key weak: its exponent e is 1") == true, "\(String(describing: error))")
    }

    @Test("keys that cannot be fetched make the ID token refused, naming the URL")
    func unreachableKeys() async throws {
        let client = ScriptedHTTPClient(status: 500, body: "{}")
        let error = await #expect(throws: IDTokenError.self) { try await Self.verify("RS256", client: client) }
        #expect(error?.description.contains(Self.jwksURI.absoluteString) == true, "\(String(describing: error))")
    }
}

/// A refresh checks the new ID token's signature with the keys recorded at sign-in (`jwks_uri` in the store).
@Suite("Refreshed ID tokens against the recorded keys")
struct RefreshedIDTokenSignatureTests {
    /// A keeper of an IAP sign-in made with the fixtures' RS256 token and key set, whose token endpoint answers
    /// `idToken` and whose key endpoint serves the fixtures' keys.
    static func refresh(with idToken: String) async throws -> StoredCredential {
        var record = TokenKeeperTests.record(.iap, now: JWSFixtures.now)
        record.clientID = "portal-auth-test"
        record.idToken = JWSFixtures.token("RS256")
        record.idTokenExpiresAt = Date(timeIntervalSince1970: 1_800_003_600)
        record.jwksURI = IDTokenSignatureTests.jwksURI
        let client = ScriptedHTTPClient { _, request in
            if request.url == IDTokenSignatureTests.jwksURI {
                return TransportResponse(
                    statusCode: 200, headers: [("Content-Type", "application/json")],
                    body: Data(JWSFixtures.keySetText("jwksRotated").utf8), url: request.url)
            }
            let body =
                #"{"access_token":"access-2","refresh_token":"refresh-2","token_type":"Bearer","expires_in":3600,"id_token":"\#(idToken)"}"#
            return TransportResponse(
                statusCode: 200, headers: [("Content-Type", "application/json")], body: Data(body.utf8),
                url: request.url)
        }
        let keeper = TokenKeeperTests.keeper(record, client)
        return try await keeper.validCredential(force: true, now: { JWSFixtures.now })
    }

    @Test("a good signature (a rotated key included) is kept")
    func good() async throws {
        let refreshed = try await Self.refresh(with: JWSFixtures.token("RS256-rotated"))
        #expect(refreshed.idToken == JWSFixtures.token("RS256-rotated"))
        #expect(refreshed.idTokenRefusal == nil)
    }

    @Test(
        "a bad signature is refused alone: the new access and refresh tokens are kept, the sign-in's ID token stays",
        arguments: ["RS256-bad", "ES256-bad"])
    func bad(name: String) async throws {
        let refreshed = try await Self.refresh(with: JWSFixtures.token(name))
        #expect(refreshed.accessToken == "access-2" && refreshed.refreshToken == "refresh-2")
        #expect(refreshed.idToken == JWSFixtures.token("RS256"))
        #expect(
            refreshed.idTokenRefusal?.contains("signature") == true, "\(String(describing: refreshed.idTokenRefusal))")
    }
}
