import Foundation
import Glibc
import Testing

/// Every command that reads an IAP configuration file refuses one another user can change (issue 43, item 2): exit
/// 66, naming the file, its mode and owner, and the `chmod` that fixes it. No server is needed: the file is refused
/// before anything is sent.
@Suite("Commands refuse IAP configuration files others can write")
struct UntrustedConfigurationCommandTests {
    private static let entra = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/iap/entra.json")

    static let commands: [[String]] = [
        ["iap", "check", "--config", "FILE"],
        ["iap", "login", "--config", "FILE", "--no-browser"],
        ["request", "--config", "FILE", "https://maps.contoso.com/portal"],
        ["token", "--iap", "FILE"],
        ["exec", "--iap", "FILE", "--", "true"],
        ["status", "--iap", "FILE"],
        ["register-scheme", "--config", "FILE"],
    ]

    @Test("a file others can write: exit 66 with the file, its mode and the chmod", arguments: commands)
    func writableByOthers(_ command: [String]) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pa-untrusted-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("iap.json")
        try Data(contentsOf: Self.entra).write(to: file)
        #expect(chmod(file.path, 0o666) == 0)
        let arguments = command.map { $0 == "FILE" ? file.path : $0 }
        let result = try await ToolRunner.run(
            arguments, environment: ["PORTAL_AUTH_STORE": directory.appendingPathComponent("store/c.json").path],
            stdin: Data())
        #expect(result.status == 66, "\(result)")
        #expect(result.stderr.contains("other users can write \(file.path) (mode 0666"), "\(result)")
        #expect(result.stderr.contains("run `chmod go-w \(file.path)`"), "\(result)")
        #expect(access(directory.appendingPathComponent("store").path, F_OK) != 0, "nothing was stored")
    }
}
