import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthStore
@testable import PortalAuthTransport

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
        /// Whether the request carried `Authorization: Bearer`.
        var sentBearer = false
        var testDescription: String { name }
    }

    static let html = [("Content-Type", "text/html; charset=utf-8")]

    static let cases: [Case] = [
        Case(
            name: "499 in HTTP 200", url: "https://gis.example.com/portal/sharing/rest/portals/self", status: 200,
            headers: [],
            body: #"{"error":{"code":499,"message":"Token Required","details":[]}}"#,
            expected: .arcGISToken(code: 499, message: "Token Required")),
        Case(
            name: "498 in HTTP 200", url: "https://gis.example.com/server/rest/services", status: 200, headers: [],
            body: #"  {"error":{"code":"498","message":"Invalid token.","details":[]}}"#,
            expected: .arcGISToken(code: 498, message: "Invalid token.")),
        Case(
            name: "498 with HTTP 498", url: "https://gis.example.com/server/rest/services", status: 498, headers: [],
            body: #"{"error":{"code":498}}"#, expected: .arcGISToken(code: 498, message: "Invalid token")),
        // The envelope is parsed only when the body may hold an `error` member (issue 27): these must still be read.
        Case(
            name: "499 whose member name escapes a letter", url: "https://gis.example.com/server/rest/services",
            status: 200, headers: [],
            body: #"{"\u0065rror":{"code":499,"message":"Token Required"}}"#,
            expected: .arcGISToken(code: 499, message: "Token Required")),
        Case(
            name: "498 written as 4.98e2 after other members", url: "https://gis.example.com/server/rest/services",
            status: 200, headers: [],
            body: #"{"a":[1,2],"error" : {"code":4.98e2}}"#, expected: .arcGISToken(code: 498, message: "Invalid token")
        ),
        Case(
            name: "a document without an error member", url: "https://gis.example.com/server/rest/services",
            status: 200, headers: [],
            body: #"{"errors":[498],"code":498,"note":"\"error\" in a string is no member"}"#, expected: nil),
        Case(
            name: "403 no permission is an answer", url: "https://gis.example.com/portal/sharing/rest/content",
            status: 200, headers: [],
            body: #"{"error":{"code":403,"message":"You do not have permissions"}}"#, expected: nil),
        Case(
            name: "400 is an answer", url: "https://gis.example.com/portal/sharing/rest/generateToken", status: 200,
            headers: [],
            body: #"{"error":{"code":400,"message":"Unable to generate token."}}"#, expected: nil),
        Case(
            name: "ordinary JSON", url: "https://gis.example.com/portal/sharing/rest/portals/self", status: 200,
            headers: [],
            body: #"{"user":{"username":"alice"}}"#, expected: nil),
        Case(
            name: "not JSON", url: "https://gis.example.com/portal/home", status: 200, headers: [],
            body: "<html>499</html>", expected: nil),
        Case(
            name: "Basic", url: "https://web.example.com/arcgis", status: 401,
            headers: [("WWW-Authenticate", #"Basic realm="GIS""#)],
            body: "", expected: .http([.init(kind: .basic, realm: "GIS")])),
        Case(
            name: "Digest with parameters", url: "https://web.example.com/arcgis", status: 401,
            headers: [("WWW-Authenticate", #"Digest realm="a, b", qop="auth", nonce="xyz", algorithm=MD5"#)],
            body: "", expected: .http([.init(kind: .digest, realm: "a, b")])),
        Case(
            name: "several schemes in one field and in two", url: "https://web.example.com/arcgis", status: 401,
            headers: [("WWW-Authenticate", "Negotiate, NTLM"), ("WWW-Authenticate", #"Basic realm="r""#)],
            body: "",
            expected: .http([
                .init(kind: .negotiate, realm: nil), .init(kind: .ntlm, realm: nil), .init(kind: .basic, realm: "r"),
            ])),
        Case(
            name: "403 with WWW-Authenticate", url: "https://web.example.com/arcgis", status: 403,
            headers: [("WWW-Authenticate", #"Basic realm="r""#)], body: "",
            expected: .http([.init(kind: .basic, realm: "r")])),
        Case(
            name: "401 without WWW-Authenticate, unknown host", url: "https://web.example.com/x", status: 401,
            headers: [], body: "", expected: nil),
        Case(
            name: "401 Bearer", url: "http://localhost:8000/iap/app/", status: 401,
            headers: [("WWW-Authenticate", #"Bearer realm="iap", authorization_uri="http://127.0.0.1/o/authorize/""#)],
            body: "",
            expected: .identityAwareProxy(detail: "HTTP 401 with a Bearer challenge")),
        Case(
            name: "401 Bearer with error", url: "http://localhost:8000/iap/app/", status: 401,
            headers: [("WWW-Authenticate", #"Bearer realm="iap", error="invalid_token""#)], body: "",
            expected: .identityAwareProxy(detail: "HTTP 401 with a Bearer challenge, error invalid_token")),
        Case(
            name: "401 from a host behind a known proxy", url: "https://maps.example.com/portal", status: 401,
            headers: [], body: "",
            expected: .identityAwareProxy(detail: "HTTP 401 from a host behind the proxy")),
        Case(
            name: "redirect to the identity provider", url: "https://maps.example.com/portal/home", status: 302,
            headers: [("Location", "https://login.example.com/tenant/oauth2/authorize?client_id=x")], body: "",
            expected: .identityAwareProxy(detail: "redirected to the identity provider at login.example.com")),
        Case(
            name: "redirect elsewhere from a host behind a proxy", url: "https://maps.example.com/portal", status: 302,
            headers: [("Location", "/portal/home/")], body: "", expected: nil),
        Case(
            name: "redirect to the identity provider from another host", url: "https://other.example.com/", status: 302,
            headers: [("Location", "https://login.example.com/tenant/oauth2/authorize")], body: "", expected: nil),
        // Sign-in requests recognised from any proxy, with no configuration for its host.
        Case(
            name: "302 to an authorization request, unknown host", url: "https://apps.unknown.example/app/data",
            status: 302,
            headers: [
                ("Location", "https://sso.unknown.example/auth?response_type=code&scope=openid&client_id=proxy&state=s")
            ], body: "",
            expected: .identityAwareProxy(detail: "redirected to an authorization request at sso.unknown.example/auth")),
        Case(
            name: "303 to an authorization request, relative", url: "https://apps.unknown.example/app/data",
            status: 303,
            headers: [("Location", "/oidc/authorize?client_id=proxy&response_type=code")], body: "",
            expected: .identityAwareProxy(
                detail: "redirected to an authorization request at apps.unknown.example/oidc/authorize")),
        Case(
            name: "401 without WWW-Authenticate to a request with a bearer token, unknown host",
            url: "https://apps.unknown.example/app",
            status: 401, headers: [], body: "",
            expected: .identityAwareProxy(detail: "HTTP 401 to a request that carried a bearer token"),
            sentBearer: true),
        Case(
            name: "401 with an unknown scheme to a request with a bearer token",
            url: "https://apps.unknown.example/app",
            status: 401, headers: [("WWW-Authenticate", "Cookie")], body: "",
            expected: .identityAwareProxy(detail: "HTTP 401 to a request that carried a bearer token"), sentBearer: true
        ),
        Case(
            name: "403 without WWW-Authenticate to a bearer request is an answer",
            url: "https://apps.unknown.example/app",
            status: 403, headers: [], body: "", expected: nil, sentBearer: true),
        // Hosts a known configuration covers.
        Case(
            name: "403 without WWW-Authenticate to a bearer request, from a host behind the proxy",
            url: "https://maps.example.com/portal/sharing/rest/portals/self", status: 403, headers: [], body: "",
            expected: .identityAwareProxy(detail: "HTTP 403 from a host behind the proxy to a request with its token"),
            sentBearer: true),
        Case(
            name: "302 to the proxy's own sign-in page",
            url: "https://maps.example.com/portal/sharing/rest/portals/self", status: 302,
            headers: [("Location", "https://maps.example.com/signin.html")], body: "",
            expected: .identityAwareProxy(detail: "redirected from a host behind the proxy to its page /signin.html")),
        Case(
            name: "302 to another host's sign-in path", url: "https://maps.example.com/portal/home", status: 302,
            headers: [("Location", "https://gateway.example.net/sso/start?x=1")], body: "",
            expected: .identityAwareProxy(
                detail: "redirected from a host behind the proxy to a sign-in page at gateway.example.net/sso/start")),
        Case(
            name: "302 to the token endpoint's host", url: "https://maps.example.com/portal/home", status: 302,
            headers: [("Location", "https://login.example.com/somewhere")], body: "",
            expected: .identityAwareProxy(detail: "redirected to the identity provider at login.example.com")),
        Case(
            name: "200 page that posts itself to the authorize endpoint", url: "https://maps.example.com/portal/home",
            status: 200, headers: html,
            body:
                #"<html><body onload="document.forms[0].submit()"><form METHOD="POST" action="https://login.example.com/tenant/oauth2/v2.0/authorize"><input type="hidden" name="state" value="x"></form></body></html>"#,
            expected: .identityAwareProxy(
                detail: "a page that posts itself to the identity provider at login.example.com")),
        Case(
            name: "200 page that posts an authorization request elsewhere", url: "https://maps.example.com/app/",
            status: 200, headers: html,
            body:
                #"<form method='post' action='https://op.example.org/authorize?a=1&amp;b=2'><input type='hidden' name='client_id' value='c'><input type='hidden' name='response_type' value='code'></form>"#,
            expected: .identityAwareProxy(detail: "a page that posts itself to the identity provider at op.example.org")
        ),
        // Ordinary answers: no false positive.
        Case(
            name: "http to https on a host behind a proxy", url: "http://maps.example.com/portal/sharing/rest/info",
            status: 301,
            headers: [("Location", "https://maps.example.com/portal/sharing/rest/info")], body: "", expected: nil),
        Case(
            name: "a trailing slash on a host behind a proxy", url: "https://maps.example.com/server/rest/services",
            status: 301,
            headers: [("Location", "https://maps.example.com/server/rest/services/")], body: "", expected: nil),
        Case(
            name: "a CDN on another host, from a host behind a proxy",
            url: "https://maps.example.com/portal/sharing/rest/content/items/1/data",
            status: 302, headers: [("Location", "https://cdn.example-static.net/items/1/data.png?sig=abc")], body: "",
            expected: nil),
        Case(
            name: "http to https, unknown host", url: "http://services.arcgis.com/x/ArcGIS/rest/info", status: 301,
            headers: [("Location", "https://services.arcgis.com/x/ArcGIS/rest/info")], body: "", expected: nil),
        Case(
            name: "a trailing slash, unknown host", url: "https://gis.example.com/portal", status: 301,
            headers: [("Location", "https://gis.example.com/portal/")], body: "", expected: nil),
        Case(
            name: "a CDN, unknown host", url: "https://www.arcgis.com/sharing/rest/content/items/1/data", status: 302,
            headers: [("Location", "https://cdn.arcgis.com/sharing/rest/content/items/1/data")], body: "", expected: nil
        ),
        Case(
            name: "a sign-in page on an unknown host is an answer", url: "https://gis.example.com/portal/home",
            status: 302,
            headers: [("Location", "https://gis.example.com/portal/home/signin.html")], body: "", expected: nil),
        Case(
            name: "401 without WWW-Authenticate and no bearer, unknown host", url: "https://web.example.com/y",
            status: 401, headers: [],
            body: "", expected: nil),
        Case(
            name: "an HTML page with an ordinary form from a host behind a proxy", url: "https://maps.example.com/app/",
            status: 200,
            headers: html, body: #"<form method="post" action="/app/search"><input name="q"></form>"#, expected: nil),
        Case(
            name: "a self-posting page from an unknown host is an answer", url: "https://web.example.com/app/",
            status: 200, headers: html,
            body: #"<form method="post" action="https://login.example.com/tenant/oauth2/v2.0/authorize"></form>"#,
            expected: nil),
    ]

    @Test("responses are read as the right challenge, or as an answer", arguments: cases)
    func detect(_ item: Case) throws {
        let url = try #require(URL(string: item.url))
        let response = TransportResponse(
            statusCode: item.status, headers: TransportHeaders(item.headers.map { (name: $0.0, value: $0.1) }),
            body: Data(item.body.utf8), url: url)
        #expect(
            DetectedChallenge.detect(
                in: response, for: url, sentBearerToken: item.sentBearer, iapConfigurations: [Self.iap])
                == item.expected)
    }

    @Test("WWW-Authenticate parsing keeps quoted commas and token68 values")
    func wwwAuthenticate() {
        let parsed = WWWAuthenticateChallenge.parse([
            #"Basic realm="x, y", charset="UTF-8", Negotiate abc123==, Bearer"#
        ])
        #expect(parsed.map(\.scheme) == ["basic", "negotiate", "bearer"])
        #expect(parsed[0].realm == "x, y")
        #expect(parsed[0].parameters["charset"] == "UTF-8")
    }
}
