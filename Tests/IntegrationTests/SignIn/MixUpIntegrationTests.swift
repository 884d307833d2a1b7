import Foundation
import Testing
@testable import PortalAuth

/// Issue 25.1 with two real providers on loopback: the hostile A (`Tests/Fakes/mixup_provider.py`) relays the
/// browser to the honest B (the bundled server), which signs alice in and redirects back with B's code and B's
/// `iss`. The configuration names A's endpoints. Whether A's discovery document claims B's issuer or A has none,
/// B's code and the PKCE verifier must never reach A's token endpoint.
@Suite("Mix-up attack through two loopback providers", .serialized, .enabled(if: TestServer.isConfigured), .timeLimit(.minutes(5)))
struct MixUpIntegrationTests {
    /// The hostile provider A, stopped with `stop()` and when this process ends.
    final class HostileProvider: Sendable {
        let base: String
        private let process: ChildProcess
        private let stdin: Pipe

        static func start(honest issuer: String, document: String) async throws -> HostileProvider {
            try await BlockingWork.run { try HostileProvider(honest: issuer, document: document) }
        }

        private init(honest issuer: String, document: String) throws {
            let script = URL(fileURLWithPath: #filePath)
                .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Fakes/mixup_provider.py")
            let process = ChildProcess()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", script.path, "--honest", issuer, "--document", document, "--lifetime", "300"]
            let stdin = Pipe()
            let stdout = Pipe()
            process.standardInput = stdin
            process.standardOutput = stdout
            try process.run()
            var output = Data()
            while !output.contains(UInt8(ascii: "\n")) {
                let chunk = stdout.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                output.append(chunk)
            }
            let line = String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard line.hasPrefix("PORT "), let port = Int(line.dropFirst(5)) else {
                process.terminate()
                throw TestFailure("mixup_provider.py did not start: \(line)")
            }
            base = "http://127.0.0.1:\(port)"
            self.process = process
            self.stdin = stdin
        }

        /// How many token requests, codes and PKCE verifiers reached A.
        func log() async throws -> JSONValue {
            try JSONValue.parse(try await CurlHTTPClient().send(.get(URL(string: "\(base)/__log__")!)).body)
        }

        func stop() {
            try? stdin.fileHandleForWriting.close()
            if process.isRunning { process.terminate() }
        }
    }

    @Test("B's code and verifier never reach A's token endpoint", arguments: ["claim-honest", "none"])
    func relayed(document: String) async throws {
        let server = try TestServer.current()
        let hostile = try await HostileProvider.start(honest: server.issuer, document: document)
        defer { hostile.stop() }
        let store = try ScratchStore()
        let config = store.directory.appendingPathComponent("iap-hostile.json").path
        let text = try String(contentsOfFile: server.iapConfig, encoding: .utf8)
            .replacingOccurrences(of: server.base + "/o/authorize/", with: hostile.base + "/oauth2/authorize")
            .replacingOccurrences(of: server.base + "/o/token/", with: hostile.base + "/oauth2/token")
        try text.write(toFile: config, atomically: true, encoding: .utf8)

        let result = try await ToolRunner.run(
            ["iap", "login", "--config", config, "--browser-command", server.browser, "--timeout", "60"],
            environment: ["PORTAL_AUTH_STORE": store.path, "PORTAL_AUTH_TEST_BROWSER_TIMEOUT": "50"], timeout: .seconds(90))
        let log = try await hostile.log()
        #expect(log["codes"]?.integerValue == 0 && log["verifiers"]?.integerValue == 0, "\(document): A got B's code: \(log)")
        #expect(result.status != 0, "\(document): \(result)")
        #expect(result.stderr.contains(server.issuer), "\(document): the error does not name B's issuer: \(result.stderr)")
        #expect(((try? store.entries()) ?? [:]).isEmpty, "\(document): a sign-in was stored")
    }
}
