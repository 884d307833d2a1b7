import Foundation
import Testing
import PortalAuth

/// `status --claims` (what the stored tokens say about themselves, never the tokens), the proxy-token choice stored
/// with an IAP sign-in, and `status --format json`'s default — on prepared stores, without a server.
@Suite("token facts and the stored proxy-token choice")
struct TokenFactsTests {
    static let entra = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/iap/entra.json").path
    static let hostURL = "https://maps.contoso.com/portal/sharing/rest/portals/self"

    /// A compact JWS with `payload` (a JSON text) and a signature that must never be printed.
    static func jwt(_ payload: String, signature: String = "U0lHTkFUVVJFLW5ldmVyLXByaW50ZWQ") -> String {
        Base64URL.encode(Array(#"{"alg":"RS256","typ":"JWT","kid":"k1"}"#.utf8)) + "."
            + Base64URL.encode(Array(payload.utf8)) + "." + signature
    }

    static let now = Int(Date().timeIntervalSince1970)
    static let idToken = jwt(
        #"{"iss":"https://login.example/tenant/v2.0","aud":"6731de76","azp":"6731de76","sub":"alice\u001b[31m","iat":\#(now - 60),"exp":\#(now + 3600),"nonce":"n"}"#
    )
    static let accessToken = jwt(
        #"{"iss":"https://sts.example/","aud":"api://maps","scp":"user_impersonation Maps.Read","iat":\#(now - 60),"exp":\#(now + 3600)}"#
    )

    /// An IAP entry for the Entra fixture holding the two JWTs, with `proxyToken` stored when given.
    static func entry(proxyToken: String? = nil) throws -> (key: String, entry: JSONObject) {
        var (key, entry) = try PreparedStore.iap(file: entra, token: accessToken)
        entry["id_token"] = .string(idToken)
        entry["id_token_expires_at"] = .integer(Int64(now + 3600))
        entry["scopes"] = .array([.string("openid")])
        if let proxyToken { entry["proxy_token"] = .string(proxyToken) }
        return (key, entry)
    }

    static func run(_ arguments: [String], _ store: PreparedStore, environment: [String: String] = [:]) async throws
        -> ToolRunner.Result
    {
        try await ToolRunner.run(arguments, environment: store.environment.merging(environment) { $1 })
    }

    @Test(
        "status --claims: issuer, audience, authorized party, subject, scopes, times; escaped; never a token or signature"
    )
    func claimsText() async throws {
        let store = try PreparedStore()
        try await store.write([try Self.entry()])
        let result = try await Self.run(["status", "--claims"], store)
        #expect(result.status == 0, "\(result)")
        let out = result.stdout
        // The lines with their padding folded: "issuer: https://…".
        let lines = result.stdoutLines.map {
            $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        }
        for line in [
            "access token claims:", "issuer: https://sts.example/", "audience: api://maps",
            "scopes: user_impersonation Maps.Read",
            "ID token claims:", "issuer: https://login.example/tenant/v2.0", "authorized party: 6731de76",
            "audience: 6731de76",
            "signed: alg RS256, typ JWT (not checked here)",
        ] {
            #expect(lines.contains(line), "missing \(line): \(out)")
        }
        #expect(lines.contains { $0.hasPrefix("subject: alice") && $0.contains("[31m") }, "\(out)")
        #expect(!out.contains("\u{1B}"), "a claim's terminal escape reaches the terminal")
        #expect(lines.contains { $0.hasPrefix("expires: 20") && $0.contains(" (in ") }, "\(out)")
        for secret in [Self.idToken, Self.accessToken, "U0lHTkFUVVJFLW5ldmVyLXByaW50ZWQ"] {
            #expect(!out.contains(secret) && !result.stderr.contains(secret), "a token or signature was printed")
        }
        let plain = try await Self.run(["status"], store)
        #expect(!plain.stdout.contains("claims:"), "claims only with --claims")
    }

    @Test("status --claims --format json: the claims as objects; an opaque access token has none")
    func claimsJSON() async throws {
        let store = try PreparedStore()
        var opaque = try Self.entry()
        opaque.entry["access_token"] = .string("opaque-token-1234567890")
        try await store.write([opaque])
        let result = try await Self.run(["status", "--claims", "--format", "json"], store)
        #expect(result.status == 0, "\(result)")
        let credential = try #require(try JSONValue.parse(Data(result.stdout.utf8))["credentials"]?.arrayValue?.first)
        #expect(credential["access_token_claims"] == .null)
        let claims = try #require(credential["id_token_claims"]?.objectValue, "\(result)")
        #expect(claims["iss"] == .string("https://login.example/tenant/v2.0"))
        #expect(claims["aud"] == .array([.string("6731de76")]))
        #expect(claims["azp"] == .string("6731de76"))
        #expect(claims["sub"] == .string("alice\u{1B}[31m"), "JSON keeps the claim as it is (escaped by JSON)")
        #expect(claims["exp"]?.stringValue?.hasSuffix("Z") == true)
        #expect(!result.stdout.contains(Self.idToken) && !result.stdout.contains("opaque-token-1234567890"))
        let text = try await Self.run(["status", "--claims"], store)
        #expect(text.stdout.contains("access token claims: none (not a JWT"), "\(text)")
    }

    @Test(
        "status --claims --format json: C1 (CSI, NEL), line separators and bidirectional controls in claims are escaped"
    )
    func claimsJSONEscaped() async throws {
        let store = try PreparedStore()
        var hostile = try Self.entry()
        let controls = #"\u009b31m\u0085\u2028\u2029\u202e\u2066\u200e\u007f"#
        hostile.entry["id_token"] = .string(
            Self.jwt(
                #"{"iss":"https://login.example/tenant/v2.0","aud":"6731de76","sub":"alice\#(controls)x","iat":\#(Self.now - 60),"exp":\#(Self.now + 3600)}"#
            ))
        try await store.write([hostile])
        let result = try await Self.run(["status", "--claims", "--format", "json"], store)
        #expect(result.status == 0, "\(result)")
        for code: UInt32 in [0x9B, 0x85, 0x2028, 0x2029, 0x202E, 0x2066, 0x200E, 0x7F] {
            #expect(
                !result.stdout.unicodeScalars.contains(Unicode.Scalar(code)!),
                "U+\(String(code, radix: 16, uppercase: true)) printed raw")
        }
        let credential = try #require(try JSONValue.parse(Data(result.stdout.utf8))["credentials"]?.arrayValue?.first)
        #expect(
            credential["id_token_claims"]?["sub"]
                == .string("alice\u{9B}31m\u{85}\u{2028}\u{2029}\u{202E}\u{2066}\u{200E}\u{7F}x"),
            "the claim reads back as it is")
    }

    @Test(
        "a stored access-token choice: token --url and exec send it; --proxy-token and the variable override; status shows it"
    )
    func storedChoice() async throws {
        let store = try PreparedStore()
        try await store.write([try Self.entry(proxyToken: "access")])
        let stored = try await Self.run(["token", "--url", Self.hostURL], store)
        #expect(stored.status == 0, "\(stored)")
        #expect(stored.stdout == Self.accessToken + "\n", "the stored choice: the access token")
        let flag = try await Self.run(["token", "--url", Self.hostURL, "--proxy-token", "id"], store)
        #expect(flag.stdout == Self.idToken + "\n", "--proxy-token overrides the stored choice: \(flag)")
        let variable = try await Self.run(
            ["token", "--url", Self.hostURL], store, environment: ["PORTAL_AUTH_PROXY_TOKEN": "id"])
        #expect(variable.stdout == Self.idToken + "\n", "the variable overrides the stored choice: \(variable)")
        let exec = try await Self.run(
            [
                "exec", "--url", Self.hostURL, "--", "/bin/sh", "-c", #"test "$PORTAL_AUTH_TOKEN" = "$0""#,
                Self.accessToken,
            ], store)
        #expect(exec.status == 0, "exec sends the stored choice: \(exec)")

        let text = try await Self.run(["status"], store)
        #expect(
            text.stdout.contains(
                "sent to hosts:  the access token (stored with the sign-in: iap login --proxy-token access"), "\(text)")
        let json = try JSONValue.parse(Data(try await Self.run(["status", "--format", "json"], store).stdout.utf8))
        #expect(json["credentials"]?.arrayValue?.first?["proxy_token"] == .string("access"))
        #expect(json["credentials"]?.arrayValue?.first?["proxy_token_stored"] == .string("access"))
        let overridden = try JSONValue.parse(
            Data(try await Self.run(["status", "--format", "json", "--proxy-token", "id"], store).stdout.utf8))
        #expect(overridden["credentials"]?.arrayValue?.first?["proxy_token"] == .string("id"))
    }

    @Test("token --format json: an expired ID token is left out beside a valid access token, its expiry shown")
    func expiredIDTokenLeftOut() async throws {
        let store = try PreparedStore()
        var expired = try Self.entry()
        expired.entry["id_token_expires_at"] = .integer(Int64(Self.now - 60))
        try await store.write([expired])
        let result = try await Self.run(["token", "--format", "json"], store)
        #expect(result.status == 0, "\(result)")
        let json = try JSONValue.parse(Data(result.stdout.utf8))
        #expect(json["token"] == .string(Self.accessToken))
        #expect(json["id_token"] == .null, "an expired ID token was printed")
        #expect(json["id_token_expires_in"] == .integer(0))
        #expect(json["id_token_expires_at"]?.stringValue?.hasSuffix("Z") == true)
        #expect(!result.stdout.contains(Self.idToken))

        try await store.write([try Self.entry()])
        let valid = try JSONValue.parse(Data(try await Self.run(["token", "--format", "json"], store).stdout.utf8))
        #expect(valid["id_token"] == .string(Self.idToken), "a valid ID token is shown")
    }

    @Test("a store written before the choice existed: loads, sends the ID token, shows no stored choice")
    func olderStore() async throws {
        let store = try PreparedStore()
        try await store.write([try Self.entry()])
        let token = try await Self.run(["token", "--url", Self.hostURL], store)
        #expect(token.stdout == Self.idToken + "\n", "\(token)")
        let json = try JSONValue.parse(Data(try await Self.run(["status", "--format", "json"], store).stdout.utf8))
        #expect(json["credentials"]?.arrayValue?.first?["proxy_token"] == .string("id"))
        #expect(json["credentials"]?.arrayValue?.first?["proxy_token_stored"] == .null)
    }

    @Test("status --format json names the default also when only one sign-in is stored")
    func defaultWithOne() async throws {
        let store = try PreparedStore()
        let entry = PreparedStore.portal("https://gis.example.test/portal", token: "t")
        try await store.write([entry])
        let json = try JSONValue.parse(Data(try await Self.run(["status", "--format", "json"], store).stdout.utf8))
        #expect(json["default"] == .string(entry.key))
        #expect(json["credentials"]?.arrayValue?.first?["default"] == .bool(true))
        let text = try await Self.run(["status"], store)
        #expect(text.stdout.contains("Portal https://gis.example.test/portal (default)"), "\(text)")
    }
}
