import Foundation
import Testing
@testable import PortalAuth

extension TestServer {
    /// alice's password, read from `PORTAL_AUTH_TEST_PASSWORD_FILE`.
    var password: String {
        get throws { try Self.secret("PORTAL_AUTH_TEST_PASSWORD_FILE") }
    }

    /// The confidential client `portal-auth-app`.
    var appClientID: String {
        ProcessInfo.processInfo.environment["PORTAL_AUTH_TEST_APP_CLIENT_ID"] ?? "portal-auth-app"
    }

    /// The file holding its secret.
    var appSecretFile: String { ProcessInfo.processInfo.environment["PORTAL_AUTH_TEST_APP_SECRET_FILE"] ?? "" }

    /// Its secret.
    var appSecret: String {
        get throws { try Self.secret("PORTAL_AUTH_TEST_APP_SECRET_FILE") }
    }

    private static func secret(_ variable: String) throws -> String {
        let path = try #require(
            ProcessInfo.processInfo.environment[variable], "\(variable) is not set: source .run/authserver.env")
        return try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `portals/self` with `token` as `X-Esri-Authorization: Bearer`, parsed.
    func portalSelf(token: String) async throws -> JSONValue {
        try await JSONValue.parse(
            get("\(portal)/sharing/rest/portals/self?f=json", headers: [("X-Esri-Authorization", "Bearer \(token)")])
                .body)
    }

    /// Every access token on the server expires now.
    func expireAccessTokens() async throws {
        var request = TransportRequest(method: .post, url: URL(string: "\(testControl)/expire-access-tokens")!)
        request.body = Data()
        #expect(try await CurlHTTPClient().send(request).statusCode == 200)
    }
}
