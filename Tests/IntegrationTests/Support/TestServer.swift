import Foundation
import Testing
@testable import PortalAuth

/// The bundled authorization server started by `scripts/authserver start` (see Tests/AuthServer/README.md),
/// described by the `PORTAL_AUTH_TEST_*` variables of `.run/authserver.env`.
struct TestServer: Sendable {
    let base: String
    let portal: String
    let clientID: String
    let iapConfig: String
    let iapURL: String
    let browser: String
    let issuer: String
    let testControl: String

    /// Whether the server's variables are present. `scripts/test` sets `PORTAL_AUTH_REQUIRE_INTEGRATION=1`,
    /// and then a missing server is a failure, not a skip.
    static var isConfigured: Bool { ServerVariables.isConfigured(by: "PORTAL_AUTH_TEST_SERVER") }

    /// The running server, or a recorded failure.
    static func current() throws -> TestServer {
        let variables = ServerVariables(
            start: "start the server with scripts/authserver start and source .run/authserver.env")
        return TestServer(
            base: try variables.value("PORTAL_AUTH_TEST_SERVER"),
            portal: try variables.value("PORTAL_AUTH_TEST_PORTAL"),
            clientID: try variables.value("PORTAL_AUTH_TEST_CLIENT_ID"),
            iapConfig: try variables.value("PORTAL_AUTH_TEST_IAP_CONFIG"),
            iapURL: try variables.value("PORTAL_AUTH_TEST_IAP_URL"),
            browser: try variables.value("PORTAL_AUTH_TEST_BROWSER"),
            issuer: try variables.value("PORTAL_AUTH_TEST_ISSUER"),
            testControl: try variables.value("PORTAL_AUTH_TEST_TESTCTL")
        )
    }

    /// A GET with extra headers through the library's own HTTP client.
    func get(_ url: String, headers: [(String, String)] = []) async throws -> TransportResponse {
        var request = TransportRequest.get(URL(string: url)!)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        return try await CurlHTTPClient().send(request)
    }
}

/// A private scratch directory with a credential store path, removed at the end of the test.
final class ScratchStore: Sendable {
    let directory: URL
    /// The store path, in a folder the tool creates itself (so its permissions are the tool's).
    var path: String { directory.appendingPathComponent("state/credentials.json").path }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("pa-it-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    /// The store file's entries (for checks the tool itself never prints).
    func entries() throws -> [String: JSONValue] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard case .object(let entries)? = try JSONValue.parse(data)["entries"] else { return [:] }
        return Dictionary(uniqueKeysWithValues: entries.members.map { ($0.key, $0.value) })
    }
}
