import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthTransport

/// One normaliser for URLs and hosts (issue 18): stored sign-ins, discovery documents and configurations compare
/// through it, so its host rules and its URL text must agree.
@Suite("URL normalisation")
struct URLNormalizationTests {
    @Test(
        "URLs naming the same place compare equal",
        arguments: [
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

    @Test(
        "URLs naming other places stay apart",
        arguments: [
            ("https://gis.example.com/portal", "https://gis.example.com/portal2"),
            ("https://gis.example.com:8443/portal", "https://gis.example.com/portal"),
            ("http://gis.example.com/portal", "https://gis.example.com/portal"),
        ])
    func otherPlace(first: String, second: String) throws {
        #expect(
            URLNormalization.comparable(try #require(URL(string: first)))
                != URLNormalization.comparable(try #require(URL(string: second))))
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

    // MARK: - Paths (issue 25: a portal's token sent outside the portal's path)

    @Test(
        "paths are compared percent-decoded with dot segments removed (RFC 3986 §5.2.4)",
        arguments: [
            ("/arcgis/rest/services", ["arcgis", "rest", "services"]),
            ("/arcgis/./rest//services/", ["arcgis", "rest", "services"]),
            ("/arcgis/sub/../rest", ["arcgis", "rest"]),
            ("/arcgis/My%20Maps", ["arcgis", "My Maps"]),
            ("/%61rcgis/rest", ["arcgis", "rest"]),
            ("/arcgis/file%2Ejson", ["arcgis", "file.json"]),
            ("", []),
            ("/", []),
        ])
    func decodedPath(path: String, expected: [String]) {
        #expect(URLNormalization.pathSegments(path) == expected)
    }

    @Test(
        "ambiguous paths are refused: encoded dot segments, encoded slashes, backslashes, double encoding, path parameters on dot segments",
        arguments: [
            "/arcgis/%2e%2e/other/collect", "/arcgis/%2E%2E/other", "/arcgis/.%2e/other", "/arcgis/%2e./other",
            "/arcgis/%2e/rest",
            "/arcgis%2f..%2fother", "/arcgis/..%2fother", "/arcgis/..%2Fother", "/arcgis/%5c..%5cother",
            "/arcgis\\..\\other",
            "/arcgis/..\\other", "/arcgis/%252e%252e/other", "/arcgis/%25", "/arcgis/..;/other", "/arcgis/.;x/rest",
            "/arcgis/%00/x",
            "/arcgis/%0a", "/arcgis/%zz", "/arcgis/%ff", "/..", "/arcgis/../..",
        ])
    func ambiguousPath(path: String) {
        #expect(URLNormalization.pathSegments(path) == nil, "\(path)")
    }
}
