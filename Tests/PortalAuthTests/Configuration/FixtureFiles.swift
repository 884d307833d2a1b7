import Foundation

/// Paths of the files under `Fixtures/` and scratch files for tests.
enum FixtureFiles {
    /// The package's `Fixtures/` folder, found from this source file.
    static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // Configuration
        .deletingLastPathComponent()  // PortalAuthTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()  // package
        .appendingPathComponent("Fixtures")

    /// `Fixtures/iap/<name>`.
    static func iap(_ name: String) -> URL {
        root.appendingPathComponent("iap").appendingPathComponent(name)
    }

    /// A new empty directory under the temporary directory; the caller removes it.
    static func scratchDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("portal-auth-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// A valid configuration as text, one key per line in a fixed order so that line numbers are known:
    /// line 1 `{`, then authorize_url (2), token_url (3), logout_url (4), client_id (5), redirect_url (6),
    /// scope (7), hosts_behind_proxy (8), authorization_prompt_type (9), `}` (10). Every key starts at column 3.
    ///
    /// `replacing` swaps a key's raw JSON value (`nil` drops the line); `extra` adds raw lines before `}`.
    static func iapJSON(replacing replacements: [String: String?] = [:], extra: [String] = []) -> String {
        let lines: [(String, String)] = [
            ("authorize_url", #""https://login.example.com/t/oauth2/v2.0/authorize""#),
            ("token_url", #""https://login.example.com/t/oauth2/v2.0/token""#),
            ("logout_url", #""https://login.example.com/t/oauth2/v2.0/logout""#),
            ("client_id", #""0f4c8c3e-2a55-4a8e-9b1e-6f0d2b7c9a10""#),
            ("redirect_url", #""http://127.0.0.1/callback""#),
            ("scope", #"["openid", "offline_access"]"#),
            ("hosts_behind_proxy", #"["*.contoso.com"]"#),
            ("authorization_prompt_type", #""""#),
        ]
        var members: [String] = []
        for (key, value) in lines {
            if let replacement = replacements[key] {
                if let replacement { members.append("  \"\(key)\": \(replacement)") }
            } else {
                members.append("  \"\(key)\": \(value)")
            }
        }
        members += extra
        return "{\n" + members.joined(separator: ",\n") + "\n}\n"
    }
}
