import Foundation
import Testing
@testable import PortalAuth

@Suite("ID token claims")
struct IDTokenTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// An unsigned compact JWT with the given payload (the signature part is not checked here).
    static func token(_ payload: JSONValue) -> String {
        let header = Base64URL.encode(Array(#"{"alg":"RS256","typ":"JWT"}"#.utf8))
        return header + "." + Base64URL.encode(Array(payload.serialized().utf8)) + ".c2ln"
    }

    static func payload(aud: JSONValue = .string("client"), nonce: String? = "n-1", exp: Double = 1_800_000_600,
                        iss: String = "https://idp.example/o") -> JSONValue {
        var object: JSONObject = ["iss": .string(iss), "aud": aud, "exp": .number(exp), "sub": .string("42"),
                                  "preferred_username": .string("alice")]
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
