import Foundation
import Testing
@testable import PortalAuth

@Suite("Loopback redirect URLs")
struct LoopbackEndpointTests {
    @Test(
        "loopback http URLs give their addresses, port and path",
        arguments: [
            ("http://127.0.0.1/callback", ["127.0.0.1"], 0, "/callback"),
            ("http://127.0.0.1:0/callback", ["127.0.0.1"], 0, "/callback"),
            ("http://127.0.0.1:8080", ["127.0.0.1"], 8080, "/"),
            ("http://127.4.5.6:9/a%20b", ["127.4.5.6"], 9, "/a%20b"),
            ("http://[::1]:4000/cb", ["[::1]"], 4000, "/cb"),
            ("HTTP://LocalHost/cb?x=1", ["127.0.0.1", "[::1]"], 0, "/cb"),
        ])
    func accepted(url: String, addresses: [String], port: Int, path: String) throws {
        let endpoint = try LoopbackEndpoint(redirectURL: #require(URL(string: url)))
        #expect(endpoint.addresses.map(\.description) == addresses)
        #expect(endpoint.port == port)
        #expect(endpoint.path == path)
    }

    @Test(
        "other URLs are refused with a reason that names them",
        arguments: [
            ("http://example.com/callback", LoopbackError.Kind.notLoopback),
            ("http://0.0.0.0:8080/callback", .notLoopback),
            ("http://192.168.1.10/callback", .notLoopback),
            ("http://128.0.0.1/callback", .notLoopback),
            ("http://[::2]/callback", .notLoopback),
            ("http://[::ffff:127.0.0.1]/callback", .notLoopback),
            ("http://127.1/callback", .notLoopback),
            ("http://localhost.example.com/callback", .notLoopback),
            ("https://127.0.0.1/callback", .notLoopback),
            ("com.esri.app://auth", .notLoopback),
            ("/callback", .notLoopback),
            ("http://user:pw@127.0.0.1/callback", .invalidRedirectURL),
            ("http://127.0.0.1/callback#x", .invalidRedirectURL),
            ("http://127.0.0.1:70000/callback", .invalidRedirectURL),
        ])
    func refused(url: String, kind: LoopbackError.Kind) throws {
        let redirectURL = try #require(URL(string: url))
        #expect {
            try LoopbackListener(redirectURL: redirectURL)
        } throws: { error in
            guard let error = error as? LoopbackError else { return false }
            return error.kind == kind && error.category == .usage && error.description.contains(url)
        }
    }

    @Test("the real port replaces the given one, keeping host spelling, path and query")
    func withPort() throws {
        let endpoint = try LoopbackEndpoint(redirectURL: #require(URL(string: "http://LocalHost/cb?x=1")))
        #expect(endpoint.url(withPort: 5555).absoluteString == "http://LocalHost:5555/cb?x=1")
        let ipv6 = try LoopbackEndpoint(redirectURL: #require(URL(string: "http://[::1]:0/cb")))
        #expect(ipv6.url(withPort: 80).absoluteString == "http://[::1]:80/cb")
    }

    @Test(
        "Host headers naming loopback hosts are accepted, others are not",
        arguments: [
            ("127.0.0.1:8080", true), ("localhost", true), ("LOCALHOST:1", true), ("[::1]:8080", true), ("[::1]", true),
            ("127.9.9.9", true), ("evil.example:8080", false), ("10.0.0.1", false), ("[::2]:80", false), ("", false),
            ("[::1", false),
        ])
    func hostHeader(value: String, accepted: Bool) {
        #expect(LoopbackEndpoint.isLoopbackHostHeader(value) == accepted)
    }
}
