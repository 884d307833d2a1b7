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
}
