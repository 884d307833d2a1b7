import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthCore

@Suite("ID token claims")
struct IDTokenTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// An unsigned compact JWT (`alg: none`) with the given payload. The scripted providers of the sign-in tests list
    /// `none` among their signing algorithms and answer over https: the one case where an ID token is accepted
    /// without a verified signature.
    static func token(_ payload: JSONValue) -> String {
        let header = Base64URL.encode(Array(#"{"alg":"none","typ":"JWT"}"#.utf8))
        return header + "." + Base64URL.encode(Array(payload.serialized().utf8)) + "."
    }

    /// What a scripted provider's discovery document adds so that `token(_:)`'s unsigned tokens are accepted.
    static let signsWithNone: JSONValue = .array([.string("none")])

    /// A payload with every required claim; `iat` is ten minutes before `exp` unless given.
    static func payload(
        aud: JSONValue = .string("client"), nonce: String? = "n-1", exp: Double = 1_800_000_600,
        iss: String = "https://idp.example/o", iat: Double? = nil, sub: String = "42"
    ) -> JSONValue {
        var object: JSONObject = [
            "iss": .string(iss), "aud": aud, "exp": .number(exp), "sub": .string(sub),
            "iat": .number(iat ?? exp - 600), "preferred_username": .string("alice"),
        ]
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
        #expect(throws: IDTokenError.self) {
            try token.validate(clientID: "mine", nonce: "n-1", expectedIssuer: nil, now: Self.now)
        }
    }

    @Test(
        "each rejected claim is named",
        arguments: [
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

    /// `payload()` with `claims` added.
    static func payload(adding claims: JSONObject) -> JSONValue {
        guard case .object(var object) = payload() else { return payload() }
        for (name, value) in claims.members { object[name] = value }
        return .object(object)
    }

    /// A compact JWT with the header `header` (JSON text) and the payload (the signature part is not checked here).
    static func token(header: String, _ payload: JSONValue) -> String {
        Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(payload.serialized().utf8)) + ".c2ln"
    }

    /// The `validate` of every test here: client `client`, nonce `n-1`, issuer `https://idp.example/o`, `now`.
    static func validate(_ compact: String) throws {
        try IDToken(compact: compact).validate(
            clientID: "client", nonce: "n-1", expectedIssuer: "https://idp.example/o", now: now)
    }

    @Test(
        "JWS header rules: crit (any, the empty list too: RFC 7515 §4.1.11) and a typ other than JWT (an RFC 9068 access token) are refused",
        arguments: [
            (#"{"alg":"RS256","crit":["exp"],"exp":1}"#, "crit"),
            (#"{"alg":"RS256","crit":[]}"#, "crit"),
            (#"{"alg":"RS256","typ":"JWT","crit":["b64"],"b64":false}"#, "crit"),
            (#"{"alg":"RS256","typ":"at+jwt"}"#, "typ"),
            (#"{"alg":"RS256","typ":"application/at+jwt"}"#, "typ"),
            (#"{"alg":"RS256","typ":"JOSE"}"#, "typ"),
            (#"{"alg":"RS256","typ":7}"#, "typ"),
        ])
    func headerRules(header: String, parameter: String) throws {
        // Accepted before issue 36: nothing looked at crit or typ.
        let error = #expect(throws: IDTokenError.self) { try Self.validate(Self.token(header: header, Self.payload())) }
        #expect(error?.description.contains("\(parameter) header was rejected") == true, "\(String(describing: error))")
    }

    @Test(
        "typ absent, JWT or jwt is an ID token's",
        arguments: [#"{"alg":"RS256"}"#, #"{"alg":"RS256","typ":"JWT"}"#, #"{"alg":"RS256","typ":"jwt"}"#])
    func typeAccepted(header: String) throws {
        try Self.validate(Self.token(header: header, Self.payload()))
    }

    /// `nbf` values against `now` (1 800 000 000) and a skew of 120 s: a day ahead, just beyond, just within, passed.
    static let notBeforeCases: [(Double, Bool)] = [
        (1_800_086_400, false), (1_800_000_121, false), (1_800_000_119, true), (1_799_999_400, true),
    ]

    @Test(
        "nbf in the future beyond the skew is refused, as iat is (RFC 7519 §4.1.5); within the skew, or passed, it is not",
        arguments: notBeforeCases)
    func notBefore(nbf: Double, accepted: Bool) throws {
        let token = Self.token(header: #"{"alg":"RS256"}"#, Self.payload(adding: ["nbf": .number(nbf)]))
        if accepted {
            try Self.validate(token)
        } else {
            let error = #expect(throws: IDTokenError.self) { try Self.validate(token) }
            #expect(error?.description.contains("nbf claim") == true, "\(String(describing: error))")
        }
        let text = Self.token(header: #"{"alg":"RS256"}"#, Self.payload(adding: ["nbf": .string("tomorrow")]))
        #expect(throws: IDTokenError.self) { try Self.validate(text) }
    }

    /// `azp`, `aud`, and whether the token is accepted for client `client`.
    static let authorizedPartyCases: [(JSONValue, JSONValue, Bool)] = [
        (.string("other-client"), .string("client"), false),
        (.string("other-client"), .array([.string("client"), .string("other-client")]), false),
        (.integer(42), .string("client"), false),
        (.string("client"), .array([.string("client"), .string("other-client")]), true),
        (.string("client"), .string("client"), true),
    ]

    @Test(
        "azp, when present, must be the client ID (OIDC Core §3.1.3.7), even when aud also names the client",
        arguments: authorizedPartyCases)
    func authorizedParty(azp: JSONValue, aud: JSONValue, accepted: Bool) throws {
        guard case .object(var object) = Self.payload(aud: aud) else { return }
        object["azp"] = azp
        let token = Self.token(header: #"{"alg":"RS256"}"#, .object(object))
        if accepted {
            try Self.validate(token)
        } else {
            let error = #expect(throws: IDTokenError.self) { try Self.validate(token) }
            #expect(error?.description.contains("azp claim") == true, "\(String(describing: error))")
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
            try token.validate(
                clientID: "client", nonce: "n-1", expectedIssuer: nil, now: Self.now, clockSkew: .seconds(120))
        }
        try check(iat: 1_800_000_000 - 5)
        try check(iat: 1_800_000_000 + 100)
        try check(iat: 1_800_000_000 - 700)
        #expect(throws: IDTokenError.self) { try check(iat: 1_800_000_000 + 130) }
        #expect(throws: IDTokenError.self) { try check(iat: 1_800_000_000 - 730) }
    }

    @Test(
        "a refreshed ID token of another sign-in is refused (OIDC Core 12.2, issue 25.6)",
        arguments: [
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
        try token.validate(
            clientID: "client", nonce: "n-1", expectedIssuer: nil, now: Self.now, clockSkew: .seconds(120))
        #expect(throws: IDTokenError.self) {
            try token.validate(
                clientID: "client", nonce: "n-1", expectedIssuer: nil, now: Self.now, clockSkew: .seconds(30))
        }
    }

    @Test(
        "malformed tokens are refused",
        arguments: ["", "a.b", "a.b.c.d", "!!.??.x", Base64URL.encode(Array("{}".utf8)) + ".e30.x"])
    func malformed(text: String) {
        #expect(throws: IDTokenError.self) { try IDToken(compact: text) }
    }

    @Test("Entra authorities: the tenant forms and clouds are recognised; the v1 endpoints and other hosts are not")
    func entraAuthority() throws {
        func authority(_ text: String) -> EntraAuthority? { URL(string: text).flatMap(EntraAuthority.init(endpoint:)) }
        let guid = try #require(
            authority("https://login.microsoftonline.com/3F2504E0-4F89-41D3-9A0C-0305E82C3301/oauth2/v2.0/authorize"))
        #expect(guid.tenant == .id("3f2504e0-4f89-41d3-9a0c-0305e82c3301"))
        #expect(
            guid.discoveryURL.absoluteString
                == "https://login.microsoftonline.com/3F2504E0-4F89-41D3-9A0C-0305E82C3301/v2.0/.well-known/openid-configuration"
        )
        #expect(
            authority("https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/token")?.tenant
                == .domain("contoso.onmicrosoft.com"))
        #expect(
            authority("https://login.microsoftonline.com/Organizations/oauth2/v2.0/authorize")?.tenant == .organizations
        )
        #expect(
            authority("https://login.microsoftonline.us/common/oauth2/v2.0/authorize")?.issuerTemplate
                == "https://login.microsoftonline.us/{tenantid}/v2.0")
        #expect(
            authority("https://login.partner.microsoftonline.cn/consumers/oauth2/v2.0/authorize")?.unusableReason != nil
        )
        #expect(
            authority("https://login.chinacloudapi.cn/contoso.cn/oauth2/v2.0/devicecode")?.deviceCodeURL.host
                == "login.chinacloudapi.cn")
        #expect(
            authority("https://login.microsoftonline.com/3f2504e0-4f89-41d3-9a0c-0305e82c3301/oauth2/authorize") == nil,
            "v1")
        #expect(authority("http://login.microsoftonline.com/common/oauth2/v2.0/authorize") == nil)
        #expect(authority("https://login.microsoftonline.com:8443/common/oauth2/v2.0/authorize") == nil)
        #expect(authority("https://idp.example/common/oauth2/v2.0/authorize") == nil)
        #expect(authority("https://login.microsoftonline.com/0e1f/oauth2/v2.0/authorize") == nil, "no tenant form")
    }
}
