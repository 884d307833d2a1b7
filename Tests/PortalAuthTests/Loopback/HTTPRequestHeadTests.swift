import Testing
@testable import PortalAuth

@Suite("Loopback request-head parser")
struct HTTPRequestHeadTests {
    @Test("parses a browser request")
    func parses() throws {
        let head = try HTTPRequestHead.parse(
            Array("GET /callback?code=a&state=b HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nAccept:  text/html \r\n\r\n".utf8))
        #expect(head.method == "GET")
        #expect(head.target == "/callback?code=a&state=b")
        #expect(head.version == "HTTP/1.1")
        #expect(head.header("host") == "127.0.0.1:8080")
        #expect(head.header("ACCEPT") == "text/html")
    }

    @Test("accepts bare LF line ends and one leading empty line")
    func lenientLineEnds() throws {
        let head = try HTTPRequestHead.parse(Array("\r\nGET / HTTP/1.0\nHost: x\n\n".utf8))
        #expect(head.version == "HTTP/1.0")
        #expect(head.header("Host") == "x")
    }

    @Test(
        "rejects malformed request lines and headers",
        arguments: [
            "", "\r\n", "GET\r\n\r\n", "GET /\r\n\r\n", "GET  / HTTP/1.1\r\n\r\n", "GET / HTTP/1.1 \r\n\r\n",
            " GET / HTTP/1.1\r\n\r\n", "GET / http/1.1\r\n\r\n", "GET / HTTP/1\r\n\r\n", "GET / HTTP/11.1\r\n\r\n",
            "G(T / HTTP/1.1\r\n\r\n", "GET /a\u{7F}b HTTP/1.1\r\n\r\n", "GET /a\tb HTTP/1.1\r\n\r\n",
            "GET /\r HTTP/1.1\r\n\r\n", "GET / HTTP/1.1\r\r\n\r\n", "GET / HTTP/1.1\r\nHost\r\n\r\n",
            "GET / HTTP/1.1\r\nHost : x\r\n\r\n", "GET / HTTP/1.1\r\n folded: x\r\n\r\n",
            "GET / HTTP/1.1\r\nX: a\u{0}b\r\n\r\n", "GET / HTTP/1.1\r\nX: a\rb\r\n\r\n",
            "\u{16}\u{03}\u{01}\u{02}\u{00}",
        ])
    func rejectsMalformed(raw: String) {
        #expect {
            try HTTPRequestHead.parse(Array(raw.utf8))
        } throws: { error in
            guard case .malformed = error as? HTTPRequestHead.ParseError else { return false }
            return true
        }
    }

    @Test("rejects non-ASCII bytes in the target", arguments: [[UInt8(0xC3), 0xA9], [0xFF]])
    func rejectsNonASCIITarget(bytes: [UInt8]) {
        let raw = Array("GET /".utf8) + bytes + Array(" HTTP/1.1\r\n\r\n".utf8)
        #expect(throws: HTTPRequestHead.ParseError.self) { try HTTPRequestHead.parse(raw) }
    }

    @Test("other HTTP versions are unsupported, not malformed", arguments: ["HTTP/2.0", "HTTP/0.9", "HTTP/1.2"])
    func unsupportedVersion(version: String) {
        #expect(throws: HTTPRequestHead.ParseError.unsupportedVersion) {
            try HTTPRequestHead.parse(Array("GET / \(version)\r\n\r\n".utf8))
        }
    }

    @Test(
        "finds the end of a head, also across reads",
        arguments: [
            ("GET / HTTP/1.1\r\n\r\n", 18), ("GET / HTTP/1.1\n\n", 16), ("GET / HTTP/1.1\r\nA: b\r\n\r\nbody", 24),
            ("GET / HTTP/1.1\r\n", -1), ("GET / HTTP/1.1\r\n\r", -1),
        ])
    func endOfHead(raw: String, expected: Int) {
        let bytes = Array(raw.utf8)
        #expect(HTTPRequestHead.endOfHead(in: bytes) ?? -1 == expected)
        // Scanning again from just before the previous end finds the same place.
        #expect(HTTPRequestHead.endOfHead(in: bytes, from: max(bytes.count - 6, 0) - 2) ?? -1 == expected)
    }
}

@Suite("Loopback parser and evaluator on mutated input")
struct LoopbackMutationTests {
    /// SplitMix64: a seeded generator, so a failure reproduces.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let seed = Array("GET /callback?code=a%20b&state=s-1&iss=x HTTP/1.1\r\nHost: 127.0.0.1:80\r\n\r\n".utf8)
    static let alphabet = Array(" \r\n:%&=?/+#\u{0}\t".utf8) + [0x80, 0xC3, 0xFF] + Array("GETHTP1.s-".utf8)

    @Test("20,000 mutated requests: no crash, and nothing is accepted without the matching state")
    func mutatedRequests() {
        var generator = SeededGenerator(state: 8252)
        let evaluator = CallbackEvaluator(path: "/callback", states: ["s-1"], issuer: "x")
        var accepted = 0
        for _ in 0..<20_000 {
            var bytes = Self.seed
            for _ in 0..<Int.random(in: 1...6, using: &generator) {
                let index = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes[index] = Self.alphabet.randomElement(using: &generator)!
                case 1: bytes.insert(Self.alphabet.randomElement(using: &generator)!, at: index)
                default: if bytes.count > 1 { bytes.remove(at: index) }
                }
            }
            guard let end = HTTPRequestHead.endOfHead(in: bytes) else { continue }
            guard let head = try? HTTPRequestHead.parse(bytes[..<end]) else { continue }
            #expect(head.target.utf8.allSatisfy { (0x21...0x7E).contains($0) })
            if case .accepted(let callback) = evaluator.evaluate(target: head.target) {
                accepted += 1
                #expect(callback.state == "s-1")
                #expect(callback.issuer == nil || callback.issuer == "x")
                #expect(!(callback.code ?? "").isEmpty)
            }
        }
        #expect(accepted > 0)  // The mutations leave some requests intact: the check above did run.
    }
}
