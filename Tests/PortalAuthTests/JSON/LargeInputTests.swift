import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthCore
@testable import PortalAuthStore
@testable import PortalAuthTransport

/// Inputs a hostile server or file can send stay cheap to read (issue 12, item 6). The outcome is asserted, never
/// the time: the time limits are hang guards (the quadratic code took minutes here); `scripts/bench` measures speed.
@Suite("Large inputs")
struct LargeInputTests {
    @Test("a 1.6 MiB token response with 150 000 members is read, and its fields found", .timeLimit(.minutes(1)))
    func manyMembers() throws {
        var body = #"{"access_token":"AT-big","expires_in":3600"#
        body.reserveCapacity(1_700_000)
        for index in 0..<150_000 { body += #","k\#(index)":\#(index)"# }
        body += #","refresh_token":"RT-big"}"#
        #expect(body.utf8.count > 1_600_000)
        let response = TransportResponse(
            statusCode: 200, headers: TransportHeaders([(name: "Content-Type", value: "application/json")]),
            body: Data(body.utf8),
            url: URL(string: "https://idp.example/token")!)
        let tokens = try TokenResponse.parse(response, endpoint: response.url)
        #expect(tokens.accessToken == "AT-big")
        #expect(tokens.refreshToken == "RT-big")
        #expect(tokens.expiresIn == .seconds(3600))
    }

    @Test("a JSON object keeps order, replaces duplicates in place and removes members", .timeLimit(.minutes(1)))
    func objectSemantics() {
        var object = JSONObject((0..<100_000).map { (key: "k\($0)", value: JSONValue.integer(Int64($0))) })
        #expect(object.members.count == 100_000)
        #expect(object["k99999"] == .integer(99_999))
        object["k5"] = .string("five")
        #expect(object.keys[5] == "k5" && object["k5"] == .string("five"))
        object["k5"] = nil
        #expect(object.keys[5] == "k6" && object["k5"] == nil && object["k99999"] == .integer(99_999))
        object["new"] = .null
        #expect(object.keys.last == "new")
        #expect(JSONObject([(key: "a", value: .integer(1)), (key: "a", value: .integer(2))]).members.count == 1)
    }

    @Test(
        "an IAP file with 1 MiB of unknown keys is checked: the first keys named, the rest counted",
        .timeLimit(.minutes(1)))
    func manyUnknownKeys() throws {
        var text =
            #"{"authorize_url": "https://idp.example/a", "token_url": "https://idp.example/t", "logout_url": "https://idp.example/l", "client_id": "abc", "redirect_url": "http://127.0.0.1/cb", "scope": ["openid"], "hosts_behind_proxy": ["maps.contoso.com"]"#
        var count = 0
        while text.utf8.count < (1 << 20) - 64 {
            text += #","unknown_key_\#(count)":1"#
            count += 1
        }
        text += "}"
        let report = IAPConfiguration.report(parsing: Data(text.utf8), file: URL(fileURLWithPath: "/tmp/big-iap.json"))
        #expect(report.errors.isEmpty, "\(report.errors.prefix(3))")
        #expect(report.configuration != nil)
        let limit = IAPConfigurationDecoder.maximumUnknownKeyWarnings
        #expect(report.warnings.count == limit + 1, "\(report.warnings.count) warnings")
        #expect(report.warnings.contains { $0.message.contains("\(count - limit) more unknown keys") })
    }

    @Test("a very long unknown key is not measured against the known keys", .timeLimit(.minutes(1)))
    func longKey() {
        #expect(KeySuggester.nearest(to: String(repeating: "x", count: 500_000), among: ["client_id", "scope"]) == nil)
        #expect(KeySuggester.nearest(to: "clientid", among: ["client_id", "scope"]) == "client_id")
    }
}
