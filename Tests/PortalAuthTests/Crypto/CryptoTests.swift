import Testing
@testable import PortalAuth
@testable import PortalAuthCore

@Suite("OpenSSL-backed primitives")
struct CryptoTests {
    @Test("PKCE challenge matches RFC 7636 appendix B")
    func rfc7636Vector() throws {
        let pkce = try PKCE(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        #expect(pkce.challenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        #expect(pkce.method == "S256")
    }

    @Test("generated verifiers are 43 unreserved characters and differ")
    func generatedVerifiers() throws {
        let first = try PKCE.generate()
        let second = try PKCE.generate()
        #expect(first.verifier.count == 43)
        #expect(first.verifier.allSatisfy { $0.isLetter || $0.isNumber || "-._~".contains($0) })
        #expect(first.verifier != second.verifier)
        #expect(try PKCE(verifier: first.verifier).challenge == first.challenge)
    }

    @Test("SHA-256 of the empty string")
    func sha256() throws {
        let digest = try SHA256Digest.hash([])
        #expect(
            digest.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
                == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test("base64url round trip and rejection", arguments: [[], [0], [0xFB, 0xFF], Array(0...255)] as [[UInt8]])
    func base64url(bytes: [UInt8]) {
        let text = Base64URL.encode(bytes)
        #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
        #expect(Base64URL.decode(Substring(text)) == bytes)
    }

    @Test("base64url rejects foreign characters")
    func base64urlRejects() {
        #expect(Base64URL.decode("ab+c") == nil)
        #expect(Base64URL.decode("a") == nil)
    }
}
