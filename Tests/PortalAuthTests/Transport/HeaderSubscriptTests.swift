import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthTransport

/// Headers set the way a Swift developer tries first (issue 28, point 15): `request.headers["Name"] = value`.
@Suite("Header subscript")
struct HeaderSubscriptTests {
    @Test("setting replaces every field of the name (any case) with one, in place; nil removes them")
    func settable() {
        var request = TransportRequest.get(URL(string: "https://gis.example/portal")!)
        request.headers.add(name: "accept", value: "text/html")
        request.headers.add(name: "X-Other", value: "1")
        request.headers.add(name: "Accept", value: "text/plain")
        request.headers["Accept"] = "application/json"
        #expect(request.headers.fields.map { $0.name.lowercased() } == ["accept", "x-other"])
        #expect(request.headers.values(for: "ACCEPT") == ["application/json"])
        request.headers["X-New"] = "2"
        #expect(request.headers["x-new"] == "2")
        request.headers["accept"] = nil
        #expect(!request.headers.contains("Accept"))
        #expect(request.headers.fields.map(\.name) == ["X-Other", "X-New"])
    }

    @Test("names match without regard to ASCII case, and only whole names match")
    func namesMatch() {
        let headers: TransportHeaders = [
            ("Content-Type", " Text/HTML ;charset=utf-8"), ("X-Esri-Authorization", "Bearer t"),
        ]
        #expect(headers["content-type"] == " Text/HTML ;charset=utf-8")
        #expect(headers["X-ESRI-AUTHORIZATION"] == "Bearer t")
        #expect(headers["Content-Typ"] == nil)
        #expect(headers["Content-Types"] == nil)
        #expect(headers["Content_Type"] == nil)
        #expect(!TransportHeaders.sameName("Äb", "äb"))  // names are ASCII tokens: no other case folding
        #expect(!TransportHeaders.sameName("[", "{"))  // 0x5B and 0x7B differ by 0x20 but are no letters
        let response = TransportResponse(
            statusCode: 200, headers: headers, body: Data(), url: URL(string: "https://gis.example/x")!)
        #expect(response.mediaType == "text/html")
        let blank = TransportResponse(
            statusCode: 200, headers: [("Content-Type", " \t; x=y")], body: Data(),
            url: URL(string: "https://gis.example/x")!)
        #expect(blank.mediaType == nil)
    }
}
