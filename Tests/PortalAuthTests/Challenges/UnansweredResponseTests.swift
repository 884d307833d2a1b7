import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthTransport

/// `UnansweredResponse`: answers `data(for:)` returns that a script must not take for the resource.
@Suite("Unanswered responses")
struct UnansweredResponseTests {
    static let requested = URL(string: "http://app.example.com:8080/api/items?f=json")!

    static func response(_ status: Int, location: String? = nil) -> TransportResponse {
        var headers = TransportHeaders()
        if let location { headers.add(name: "Location", value: location) }
        return TransportResponse(statusCode: status, headers: headers, url: requested)
    }

    @Test(
        "401 and 403 are refusals; other statuses are answers",
        arguments: [
            (401, UnansweredResponse?.some(.refused(statusCode: 401))), (403, .refused(statusCode: 403)), (200, nil),
            (404, nil), (500, nil),
        ])
    func refusals(status: Int, expected: UnansweredResponse?) {
        #expect(UnansweredResponse.detect(in: Self.response(status), for: Self.requested) == expected)
    }

    static let base64 = Data("http://app.example.com:8080/api/items?f=json".utf8).base64EncodedString()

    @Test(
        "a redirect whose target names the requested URL to return to is a sign-in redirect",
        arguments: [
            "https://auth.example.com/?url=\(base64)",  // LemonLDAP::NG: base64
            "https://auth.example.com/?url=\(base64.replacingOccurrences(of: "=", with: ""))",  // without padding
            "https://sso.example.com/login?next=http%3A%2F%2Fapp.example.com%3A8080%2Fapi%2Fitems",  // percent-encoded
            "/portal/?returnTo=http://APP.example.com:8080/api/items",  // the same host, another path; host case
        ])
    func signInRedirect(location: String) {
        guard
            case .signInRedirect = UnansweredResponse.detect(
                in: Self.response(302, location: location), for: Self.requested)
        else {
            Issue.record("not a sign-in redirect: \(location)")
            return
        }
    }

    @Test(
        "ordinary redirects are answers: a trailing slash, another path, a return URL naming another page or port",
        arguments: [
            "http://app.example.com:8080/api/items/",
            "https://cdn.example.net/api/items.json",
            "https://auth.example.com/?url=http://app.example.com:8080/other",
            "https://auth.example.com/?url=http://app.example.com/api/items",
            "https://auth.example.com/?url=bm90IGEgVVJM",
        ])
    func ordinaryRedirect(location: String) {
        #expect(
            UnansweredResponse.detect(in: Self.response(302, location: location), for: Self.requested) == nil,
            "\(location)")
    }
}
