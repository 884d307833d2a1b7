import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthTransport

/// Credentials never follow a redirect to another origin, whatever their placement (issue 12, item 13).
@Suite("Redirects to another origin")
struct CrossOriginRedirectTests {
    private static let origin = URL(string: "https://gis.example.com/server/rest/query")!

    private static func redirect(_ status: Int, to location: String, of request: TransportRequest)
        throws(TransportError) -> TransportRequest?
    {
        try CurlHTTPClient.redirect(
            after: TransportResponse(
                statusCode: status, headers: TransportHeaders([(name: "Location", value: location)]), url: request.url),
            of: request)
    }

    @Test(
        "a 307 or 308 to another origin that would resend a form body with token= is not followed",
        arguments: [307, 308])
    func formBodyNotResent(status: Int) {
        let request = TransportRequest.form(Self.origin, fields: [("where", "1=1"), ("token", "SECRET-TOKEN")])
        #expect(throws: TransportError.self) {
            try Self.redirect(status, to: "https://evil.example.net/collect", of: request)
        }
        do {
            _ = try Self.redirect(status, to: "https://evil.example.net/collect", of: request)
        } catch {
            #expect(error.kind == .invalidRedirect)
            #expect(!error.description.contains("SECRET-TOKEN"))
        }
    }

    @Test("the same origin keeps the body; another port or scheme is another origin")
    func sameOrigin() throws {
        let request = TransportRequest.form(Self.origin, fields: [("token", "SECRET-TOKEN")])
        let kept = try #require(try Self.redirect(307, to: "/server/rest/query2", of: request))
        #expect(kept.body == request.body)
        #expect(throws: TransportError.self) {
            try Self.redirect(307, to: "https://gis.example.com:8443/x", of: request)
        }
    }

    @Test("a token query parameter does not follow a redirect to another origin")
    func queryTokenDropped() throws {
        let request = TransportRequest.get(URL(string: "https://gis.example.com/x?f=json&token=SECRET-TOKEN")!)
        let next = try #require(
            try Self.redirect(302, to: "https://cdn.example.net/y?f=json&token=SECRET-TOKEN&a=1", of: request))
        #expect(!next.url.absoluteString.contains("SECRET-TOKEN"))
        #expect(next.url.query == "f=json&a=1")
        let same = try #require(try Self.redirect(302, to: "/y?token=SECRET-TOKEN", of: request))
        #expect(same.url.absoluteString.contains("SECRET-TOKEN"), "the same origin may receive it")
    }

    @Test("a POST turned into a GET by 302/303 may go to another origin, without its body or credential headers")
    func postBecomesGet() throws {
        var request = TransportRequest.form(Self.origin, fields: [("token", "SECRET-TOKEN")])
        request.headers.add(name: "X-Esri-Authorization", value: "Bearer SECRET-TOKEN")
        request.headers.add(name: "Proxy-Authorization", value: "Basic c2VjcmV0")
        let next = try #require(try Self.redirect(303, to: "https://other.example.net/done", of: request))
        #expect(next.body == nil)
        #expect(next.headers["X-Esri-Authorization"] == nil && next.headers["Proxy-Authorization"] == nil)
    }
}
