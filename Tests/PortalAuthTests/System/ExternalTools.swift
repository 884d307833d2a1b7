import Foundation
import Testing

/// Tests that need more than Swift (python3, the `openssl` tool, xdg-utils, root, network namespaces) are tagged and run only
/// when `PORTAL_AUTH_EXTERNAL_TESTS=1`, which `scripts/test` sets for its run beside the integration tests; a plain
/// `swift test --filter PortalAuthTests` needs only the Swift toolchain and the C libraries it links.
enum ExternalTools {
    /// Whether the tagged tests run: `PORTAL_AUTH_EXTERNAL_TESTS=1`.
    static let enabled = ProcessInfo.processInfo.environment["PORTAL_AUTH_EXTERNAL_TESTS"] == "1"

    /// The condition every tagged suite or test carries.
    static var condition: ConditionTrait {
        .enabled(if: enabled, "needs tools beyond Swift; scripts/test runs it with PORTAL_AUTH_EXTERNAL_TESTS=1")
    }
}

extension Tag {
    /// Runs `Tests/Fakes/fault_server.py` (python3).
    @Tag static var python: Self
    /// Makes certificates with the `openssl` command-line tool.
    @Tag static var openssl: Self
    /// Runs xdg-utils and desktop-file-utils (`xdg-mime`, `update-desktop-database`).
    @Tag static var desktopTools: Self
    /// Needs root (mounting a file system, creating network namespaces with `ip`).
    @Tag static var root: Self
}
