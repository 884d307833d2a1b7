import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthCore

@Suite("ID token claims")
struct IDTokenTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// An unsigned compact JWT with the given payload (the signature part is not checked here).
    static func token(_ payload: JSONValue) -> String {
        let header = Base64URL.encode(Array(#"{"alg":"RS256","typ":"JWT"}"#.utf8))
        return header + "." + Base64URL.encode(Array(payload.serialized().utf8)) + ".c2ln"
    }

    /// A payload with every required claim; `iat` is ten minutes before `exp` unless given.
    static func payload(aud: JSONValue = .string("client"), nonce: String? = "n-1", exp: Double = 1_800_000_600,
                        iss: String = "https://idp.example/o", iat: Double? = nil, sub: String = "42") -> JSONValue {
        var object: JSONObject = ["iss": .string(iss), "aud": aud, "exp": .number(exp), "sub": .string(sub),
                                  "iat": .number(iat ?? exp - 600), "preferred_username": .string("alice")]
        if let nonce { object["nonce"] = .string(nonce) }
        return .object(object)
    }

    @Test("a good token passes and exposes its claims")
    func accepts() throws {
        let token = try IDToken(compact: Self.token(Self.payload()))
        try token.validate(clientID: "client", nonce: "n-1", expectedIssuer: "https://idp.example/o", now: Self.now)
        #expect(token.username == "alice")
        #expect(token.audiences == ["client"])
        #expect(!token.description.contains(token.compact))
    }

    @Test("aud as an array must contain the client")
    func audienceArray() throws {
        let token = try IDToken(compact: Self.token(Self.payload(aud: .array([.string("other"), .string("client")]))))
        try token.validate(clientID: "client", nonce: "n-1", expectedIssuer: nil, now: Self.now)
        #expect(throws: IDTokenError.self) { try token.validate(clientID: "mine", nonce: "n-1", expectedIssuer: nil, now: Self.now) }
    }

    @Test("each rejected claim is named", arguments: [
        ("aud", payload(aud: .string("someone-else"))),
        ("nonce", payload(nonce: "replayed")),
        ("nonce", payload(nonce: nil)),
        ("iss", payload(iss: "https://evil.example/o")),
        ("exp", payload(exp: 1_800_000_000 - 600)),
    ])
    func rejects(claim: String, payload: JSONValue) throws {
        let token = try IDToken(compact: Self.token(payload))
        do {
            try token.validate(clientID: "client", nonce: "n-1", expectedIssuer: "https://idp.example/o", now: Self.now)
            Issue.record("expected the \(claim) claim to be rejected")
        } catch {
            #expect(error.description.contains("\(claim) claim"))
        }
    }

    /// `payload()` without `claim`.
    static func payload(removing claim: String) -> JSONValue {
        guard case .object(var object) = payload() else { return payload() }
        object[claim] = nil
        return .object(object)
    }

    @Test("sub and iat are required (OIDC Core §2: rp-id_token-sub, rp-id_token-iat)", arguments: ["sub", "iat"])
    func requiredClaims(claim: String) throws {
        let token = try IDToken(compact: Self.token(Self.payload(removing: claim)))
        let error = #expect(throws: IDTokenError.self) {
            try token.validate(clientID: "client", nonce: "n-1", expectedIssuer: "https://idp.example/o", now: Self.now)
        }
        #expect(error?.description.contains("\(claim) claim") == true, "\(String(describing: error))")
    }

    @Test("iat must lie within the skew window of the (injected) clock: not in the future, not older than ten minutes")
    func issuedAtWindow() throws {
        func check(iat: Double) throws {
            let token = try IDToken(compact: Self.token(Self.payload(exp: 1_800_003_600, iat: iat)))
            try token.validate(clientID: "client", nonce: "n-1", expectedIssuer: nil, now: Self.now, clockSkew: .seconds(120))
        }
        try check(iat: 1_800_000_000 - 5)
        try check(iat: 1_800_000_000 + 100)
        try check(iat: 1_800_000_000 - 700)
        #expect(throws: IDTokenError.self) { try check(iat: 1_800_000_000 + 130) }
        #expect(throws: IDTokenError.self) { try check(iat: 1_800_000_000 - 730) }
    }

    @Test("a refreshed ID token of another sign-in is refused (OIDC Core 12.2, issue 25.6)", arguments: [
        ("sub", payload(sub: "43")), ("iss", payload(iss: "https://idp.example/other")),
        ("aud", payload(aud: .array([.string("client"), .string("other")]))), ("nonce", payload(nonce: "n-2")),
    ])
    func identitySwitch(claim: String, payload: JSONValue) throws {
        let signIn = try IDToken(compact: Self.token(Self.payload()))
        try IDToken(compact: Self.token(Self.payload(nonce: nil))).requireSameSignIn(as: signIn)
        let refreshed = try IDToken(compact: Self.token(payload))
        let error = #expect(throws: IDTokenError.self) { try refreshed.requireSameSignIn(as: signIn) }
        #expect(error?.description.contains("\(claim) claim") == true, "\(String(describing: error))")
    }

    @Test("expiry tolerates the clock skew allowance, not more")
    func skew() throws {
        let token = try IDToken(compact: Self.token(Self.payload(exp: 1_800_000_000 - 60)))
        try token.validate(clientID: "client", nonce: "n-1", expectedIssuer: nil, now: Self.now, clockSkew: .seconds(120))
        #expect(throws: IDTokenError.self) {
            try token.validate(clientID: "client", nonce: "n-1", expectedIssuer: nil, now: Self.now, clockSkew: .seconds(30))
        }
    }

    @Test("malformed tokens are refused", arguments: ["", "a.b", "a.b.c.d", "!!.??.x", Base64URL.encode(Array("{}".utf8)) + ".e30.x"])
    func malformed(text: String) {
        #expect(throws: IDTokenError.self) { try IDToken(compact: text) }
    }

    @Test("Entra tenant issuers are derived; multi-tenant endpoints are not")
    func entraIssuer() {
        #expect(IssuerDiscovery.entraIssuer(URL(string: "https://login.microsoftonline.com/0e1f/oauth2/v2.0/authorize")!)
                == "https://login.microsoftonline.com/0e1f/v2.0")
        #expect(IssuerDiscovery.entraIssuer(URL(string: "https://login.microsoftonline.com/common/oauth2/v2.0/authorize")!) == nil)
        #expect(IssuerDiscovery.entraIssuer(URL(string: "https://idp.example/authorize")!) == nil)
    }
}
