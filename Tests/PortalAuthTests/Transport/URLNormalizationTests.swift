import Foundation
import Testing
@testable import PortalAuth

/// One normaliser for URLs and hosts (issue 18): stored sign-ins, discovery documents and configurations compare
/// through it, so its host rules and its URL text must agree.
@Suite("URL normalisation")
struct URLNormalizationTests {
    @Test("URLs naming the same place compare equal", arguments: [
        ("https://GIS.Example.com/portal/", "https://gis.example.com/portal"),
        ("https://gis.example.com:443/portal?x=1#f", "https://gis.example.com/portal"),
        ("HTTP://localhost:80/", "http://localhost"),
        ("https://gis.example.com./portal", "https://gis.example.com/portal"),
        ("http://[0:0::1]:8080/cb", "http://[::1]:8080/cb"),
    ])
    func samePlace(written: String, expected: String) throws {
        let url = try #require(URL(string: written))
        #expect(URLNormalization.comparable(url) == expected)
        #expect(URLNormalization.comparable(try #require(URL(string: expected))) == expected)
    }

    @Test("URLs naming other places stay apart", arguments: [
        ("https://gis.example.com/portal", "https://gis.example.com/portal2"),
        ("https://gis.example.com:8443/portal", "https://gis.example.com/portal"),
        ("http://gis.example.com/portal", "https://gis.example.com/portal"),
    ])
    func otherPlace(first: String, second: String) throws {
        #expect(URLNormalization.comparable(try #require(URL(string: first))) != URLNormalization.comparable(try #require(URL(string: second))))
    }

    @Test("the host of a URL follows the same rules as the URL's text")
    func hostAgreesWithURL() throws {
        let url = try #require(URL(string: "https://[0:0:0:0:0:0:0:1]/"))
        #expect(URLNormalization.host(of: url) == "::1")
        #expect(URLNormalization.host("Login.MicrosoftOnline.com.") == "login.microsoftonline.com")
        #expect(URLNormalization.isLoopbackHost("[::1]"))
        #expect(URLNormalization.isLoopbackHost("127.1.2.3"))
        #expect(!URLNormalization.isLoopbackHost("128.0.0.1"))
    }
}
