import Foundation
import Testing

/// The tool opens libcurl and OpenSSL on first use (issue 17): `token` with a valid stored token never loads
/// them; a command that sends a request does. Seen through the dynamic loader's own trace (`LD_DEBUG=files`).
@Suite("libcurl and OpenSSL are opened on first use")
struct LazyLibraryLoadingTests {
    private static let heavyLibraries = ["libcurl.so.4", "libssl.so.3", "libcrypto.so.3"]

    @Test("token with a valid stored token loads none of them; refresh opens libcurl")
    func loadedOnFirstUse() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "portal-auth-lazy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("credentials.json")
        try FastPathStore.valid.write(to: store, now: Int64(Date().timeIntervalSince1970))
        let selection = ["--portal", FastPathStore.portal, "--store", store.path]

        let token = try await ToolRunner.run(["token"] + selection, environment: ["LD_DEBUG": "files"])
        #expect(token.status == 0, "\(token)")
        #expect(token.stdout == "AT-app1\n")
        let linked = Self.heavyLibraries.filter { token.stderr.contains("file=\($0) [0];  needed by") }
        if linked.isEmpty {
            for library in Self.heavyLibraries {
                #expect(!token.stderr.contains(library), "token loaded \(library)")
            }
        } else {
            // A development build (`swift build`) still lists them (pkg-config's -l flags); scripts/install's
            // build does not, and scripts/test runs this suite on that build.
            #expect(linked == Self.heavyLibraries, "partly linked: \(linked)")
        }

        let refresh = try await ToolRunner.run(
            ["refresh"] + selection + ["--timeout", "20"], environment: ["LD_DEBUG": "files"])
        #expect(refresh.status == 69, "\(refresh)")
        #expect(
            refresh.stderr.contains("file=libcurl.so.4 [0];  \(linked.isEmpty ? "dynamically loaded by" : "needed by")")
        )
    }

    @Test("--version names the libcurl and OpenSSL the process opens (through the same loading)")
    func versionsThroughLoading() async throws {
        let result = try await ToolRunner.run(["--version"], environment: ["PORTAL_AUTH_FAST_PATH": "only"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.hasPrefix("portal-auth "), "\(result)")
        #expect(result.stdout.contains("(libcurl "), "\(result)")
        #expect(result.stdout.contains(", OpenSSL 3"), "\(result)")
        #expect(!result.stdout.contains("unavailable"), "\(result)")
    }
}
