import Foundation
import Testing
@testable import PortalAuth

@Suite("Challenge detection")
struct ChallengeDetectionTests {
    static let iap = try! IAPConfiguration.configuration(
        authorizeURL: URL(string: "https://login.example.com/tenant/oauth2/v2.0/authorize")!,
        tokenURL: URL(string: "https://login.example.com/tenant/oauth2/v2.0/token")!,
        logoutURL: URL(string: "https://login.example.com/tenant/oauth2/v2.0/logout")!,
        clientID: "client", redirectURL: URL(string: "http://127.0.0.1/callback")!, scopes: ["openid"],
        hostsBehindProxy: ["maps.example.com"])

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let url: String
        let status: Int
        let headers: [(String, String)]
        let body: String
        let expected: DetectedChallenge?
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "499 in HTTP 200", url: "https://gis.example.com/portal/sharing/rest/portals/self", status: 200, headers: [],
             body: #"{"error":{"code":499,"message":"Token Required","details":[]}}"#, expected: .arcGISToken(code: 499, message: "Token Required")),
        Case(name: "498 in HTTP 200", url: "https://gis.example.com/server/rest/services", status: 200, headers: [],
             body: #"  {"error":{"code":"498","message":"Invalid token.","details":[]}}"#, expected: .arcGISToken(code: 498, message: "Invalid token.")),
        Case(name: "498 with HTTP 498", url: "https://gis.example.com/server/rest/services", status: 498, headers: [],
             body: #"{"error":{"code":498}}"#, expected: .arcGISToken(code: 498, message: "Invalid token")),
        Case(name: "403 no permission is an answer", url: "https://gis.example.com/portal/sharing/rest/content", status: 200, headers: [],
             body: #"{"error":{"code":403,"message":"You do not have permissions"}}"#, expected: nil),
        Case(name: "400 is an answer", url: "https://gis.example.com/portal/sharing/rest/generateToken", status: 200, headers: [],
             body: #"{"error":{"code":400,"message":"Unable to generate token."}}"#, expected: nil),
        Case(name: "ordinary JSON", url: "https://gis.example.com/portal/sharing/rest/portals/self", status: 200, headers: [],
             body: #"{"user":{"username":"alice"}}"#, expected: nil),
        Case(name: "not JSON", url: "https://gis.example.com/portal/home", status: 200, headers: [], body: "<html>499</html>", expected: nil),
        Case(name: "Basic", url: "https://web.example.com/arcgis", status: 401, headers: [("WWW-Authenticate", #"Basic realm="GIS""#)],
             body: "", expected: .http([.init(kind: .basic, realm: "GIS")])),
        Case(name: "Digest with parameters", url: "https://web.example.com/arcgis", status: 401,
             headers: [("WWW-Authenticate", #"Digest realm="a, b", qop="auth", nonce="xyz", algorithm=MD5"#)],
             body: "", expected: .http([.init(kind: .digest, realm: "a, b")])),
        Case(name: "several schemes in one field and in two", url: "https://web.example.com/arcgis", status: 401,
             headers: [("WWW-Authenticate", "Negotiate, NTLM"), ("WWW-Authenticate", #"Basic realm="r""#)],
             body: "", expected: .http([.init(kind: .negotiate, realm: nil), .init(kind: .ntlm, realm: nil), .init(kind: .basic, realm: "r")])),
        Case(name: "403 with WWW-Authenticate", url: "https://web.example.com/arcgis", status: 403,
             headers: [("WWW-Authenticate", #"Basic realm="r""#)], body: "", expected: .http([.init(kind: .basic, realm: "r")])),
        Case(name: "401 without WWW-Authenticate, unknown host", url: "https://web.example.com/x", status: 401, headers: [], body: "", expected: nil),
        Case(name: "401 Bearer", url: "http://localhost:8000/iap/app/", status: 401,
             headers: [("WWW-Authenticate", #"Bearer realm="iap", authorization_uri="http://127.0.0.1/o/authorize/""#)], body: "",
             expected: .identityAwareProxy(detail: "HTTP 401 with a Bearer challenge")),
        Case(name: "401 Bearer with error", url: "http://localhost:8000/iap/app/", status: 401,
             headers: [("WWW-Authenticate", #"Bearer realm="iap", error="invalid_token""#)], body: "",
             expected: .identityAwareProxy(detail: "HTTP 401 with a Bearer challenge, error invalid_token")),
        Case(name: "401 from a host behind a known proxy", url: "https://maps.example.com/portal", status: 401, headers: [], body: "",
             expected: .identityAwareProxy(detail: "HTTP 401 from a host behind the proxy")),
        Case(name: "redirect to the identity provider", url: "https://maps.example.com/portal/home", status: 302,
             headers: [("Location", "https://login.example.com/tenant/oauth2/authorize?client_id=x")], body: "",
             expected: .identityAwareProxy(detail: "redirected to the identity provider at login.example.com")),
        Case(name: "redirect elsewhere from a host behind a proxy", url: "https://maps.example.com/portal", status: 302,
             headers: [("Location", "/portal/home/")], body: "", expected: nil),
        Case(name: "redirect to the identity provider from another host", url: "https://other.example.com/", status: 302,
             headers: [("Location", "https://login.example.com/tenant/oauth2/authorize")], body: "", expected: nil),
    ]

    @Test("responses are read as the right challenge, or as an answer", arguments: cases)
    func detect(_ item: Case) throws {
        let url = try #require(URL(string: item.url))
        let response = TransportResponse(
            statusCode: item.status, headers: TransportHeaders(item.headers.map { (name: $0.0, value: $0.1) }), body: Data(item.body.utf8), url: url)
        #expect(DetectedChallenge.detect(in: response, for: url, iapConfigurations: [Self.iap]) == item.expected)
    }

    @Test("WWW-Authenticate parsing keeps quoted commas and token68 values")
    func wwwAuthenticate() {
        let parsed = WWWAuthenticateChallenge.parse([#"Basic realm="x, y", charset="UTF-8", Negotiate abc123==, Bearer"#])
        #expect(parsed.map(\.scheme) == ["basic", "negotiate", "bearer"])
        #expect(parsed[0].realm == "x, y")
        #expect(parsed[0].parameters["charset"] == "UTF-8")
    }
}
