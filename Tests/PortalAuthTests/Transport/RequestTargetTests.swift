import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthTransport

@Suite("Request targets: loopback and the http rule")
struct RequestTargetTests {
    // Which hosts are loopback: the one rule's table, LoopbackRuleTests (Tests/PortalAuthTests/Loopback).

    @Test(
        "allows http only to loopback, as libcurl parses the host",
        arguments: [
            ("http://127.0.0.1:8080/x", true), ("http://localhost/x", true), ("http://portal.localhost:8080/x", true),
            ("http://[::1]:9/x", true),
            ("http://127.1/x", true),  // libcurl normalises 127.1 to 127.0.0.1
            ("https://example.com/x", true),
            ("http://example.com/x", false), ("http://127.0.0.1.nip.io/x", false),
            ("http://0x7f000001.example/x", false),
        ])
    func httpRule(url: String, allowed: Bool) {
        do {
            let target = try RequestTarget.checked(URL(string: url)!)
            #expect(allowed, "expected \(url) to be refused, got host \(target.host)")
        } catch {
            #expect(!allowed, "expected \(url) to be allowed: \(error)")
            #expect(error.kind == .insecureHTTP)
        }
    }

    @Test(
        "remembers targets by scheme and authority only, never with user information",
        arguments: [
            ("https://gis.example.com:7443/portal/sharing/rest?token=SECRET", "https://gis.example.com:7443"),
            ("http://127.0.0.1:8080?code=SECRET", "http://127.0.0.1:8080"),
            ("https://[::1]:9#frag", "https://[::1]:9"),
            ("https://user:pw@gis.example.com/portal", nil),
            ("mailto:someone@example.com", nil),
        ] as [(String, String?)])
    func originKey(url: String, expected: String?) {
        #expect(RequestTarget.originText(of: url) == expected)
    }

    @Test("a remembered target is the one a fresh parse gives, and the http rule still holds for each URL")
    func rememberedTargets() throws {
        let first = try RequestTarget.checked(URL(string: "http://127.0.0.1:8181/a?x=1")!)
        let again = try RequestTarget.checked(URL(string: "http://127.0.0.1:8181/b/c")!)
        #expect(first == again)
        #expect(again == RequestTarget(scheme: "http", host: "127.0.0.1", port: 8181))
        for _ in 0..<2 {
            #expect(throws: TransportError.self) {
                try RequestTarget.checked(URL(string: "http://example.com:8181/x")!)
            }
        }
    }

    @Test("refuses schemes other than http and https")
    func otherSchemes() {
        #expect(throws: TransportError.self) { try RequestTarget.checked(URL(string: "ftp://example.com/file")!) }
        do {
            _ = try RequestTarget.checked(URL(string: "file:///etc/passwd")!)
            Issue.record("file URL accepted")
        } catch {
            #expect(error.kind == .unsupportedURL)
            #expect(error.category == .usage)
        }
    }

    @Test(
        "redacts user information, query and fragment",
        arguments: [
            (
                "https://user:pw@portal.example.com:7443/sharing/rest/oauth2/token?code=SECRET#frag",
                "https://portal.example.com:7443/sharing/rest/oauth2/token"
            ),
            ("http://127.0.0.1:8080/callback?code=SECRET&state=S", "http://127.0.0.1:8080/callback"),
            ("https://example.com", "https://example.com"),
        ])
    func redaction(url: String, expected: String) {
        #expect(RedactedURL(URL(string: url)!).description == expected)
    }
}

@Suite("Transport configuration")
struct TransportConfigurationTests {
    @Test(
        "chooses the CA bundle: setting, then PORTAL_AUTH_CA_BUNDLE, CURL_CA_BUNDLE, SSL_CERT_FILE",
        arguments: [
            (Optional("/set.pem"), ["PORTAL_AUTH_CA_BUNDLE": "/pa.pem"], Optional("/set.pem")),
            (
                nil, ["PORTAL_AUTH_CA_BUNDLE": "/pa.pem", "CURL_CA_BUNDLE": "/curl.pem", "SSL_CERT_FILE": "/ssl.pem"],
                "/pa.pem"
            ),
            (
                nil, ["PORTAL_AUTH_CA_BUNDLE": "", "CURL_CA_BUNDLE": "/curl.pem", "SSL_CERT_FILE": "/ssl.pem"],
                "/curl.pem"
            ),
            (nil, ["SSL_CERT_FILE": "/ssl.pem"], "/ssl.pem"),
            (nil, [:], nil),
        ] as [(String?, [String: String], String?)])
    func caBundle(setting: String?, environment: [String: String], expected: String?) {
        let tls = TransportConfiguration.TLS(caBundle: setting.map { URL(fileURLWithPath: $0) })
        #expect(tls.effectiveCABundle(environment: environment)?.path == expected)
    }

    @Test("defaults are safe")
    func defaults() {
        let configuration = TransportConfiguration()
        #expect(configuration.followRedirects == false)
        #expect(configuration.timeouts.connect == .seconds(10))
        #expect(configuration.timeouts.total == .seconds(60))
        #expect(configuration.maxResponseBytes == 4 * 1024 * 1024)
        #expect(configuration.userAgent.hasPrefix("portal-auth/"))
    }
}
