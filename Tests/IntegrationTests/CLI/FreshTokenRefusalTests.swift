import Foundation
import Testing
import TestSupport
import PortalAuth

/// One rule for a fresh IAP token that a host behind the proxy refuses: HTTP 401 and 403 alike exit 65 (signing in
/// again would bring the same kind of token), as CommandLineTool.md and `request --help` say; a 401 or 403 with no
/// sign-in stored for the host stays 77 (a sign-in is needed).
@Suite("fresh token refusal")
struct FreshTokenRefusalTests {
    @Test("a fresh IAP token refused with 401 or 403 exits 65, naming the likely causes", arguments: [401, 403])
    func refused(status: Int) async throws {
        let server = try await BlockingWork.run { try ReplyServer() }
        defer { server.stop() }
        let base = server.url("")
        let host = try #require(URL(string: base)?.host).appending(":\(try #require(URL(string: base)?.port))")
        let store = try PreparedStore()
        let file = store.directory.appendingPathComponent("proxy-iap.json")
        var configuration = try #require(
            try JSONValue.parse(Data(contentsOf: SignInSelectionCommandTests.fixture("iap/entra.json"))).objectValue)
        configuration["hosts_behind_proxy"] = .array([.string(host)])
        try Data(JSONValue.object(configuration).serialized().utf8).write(to: file)
        try await store.write([try PreparedStore.iap(file: file.path, token: "iap-token")])
        let result = try await ToolRunner.run(
            ["request", server.url("/status/\(status)")], environment: store.environment)
        #expect(result.status == 65, "HTTP \(status): \(result)")
        #expect(result.stdout.isEmpty, "\(result)")
        #expect(result.stderr.contains("refused a fresh"), "HTTP \(status): \(result)")
        #expect(!result.stderr.contains("iap-token"), "\(result)")
    }
}
