import Foundation

/// Finds the built `portal-auth` binary next to the test bundle (the same build folder).
enum BinaryLocator {
    /// The path of the built tool, or `PORTAL_AUTH_BINARY` when set.
    static var toolPath: String {
        if let override = ProcessInfo.processInfo.environment["PORTAL_AUTH_BINARY"] { return override }
        return builtExecutable("portal-auth")
    }

    /// The test app of `Tests/StoreScopeApp` (`portal-auth-test-app`), built beside the test bundle.
    static var testAppPath: String { builtExecutable("portal-auth-test-app") }

    /// The executable `name` in the test bundle's folder or one of the three above it, else in `.build/debug`.
    private static func builtExecutable(_ name: String) -> String {
        var directory = URL(fileURLWithPath: CommandLine.arguments.first ?? ".").deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return ".build/debug/\(name)"
    }
}
