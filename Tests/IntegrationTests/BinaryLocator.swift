import Foundation

/// Finds the built `portal-auth` binary next to the test bundle (the same build folder).
enum BinaryLocator {
    /// The path of the built tool, or `PORTAL_AUTH_BINARY` when set.
    static var toolPath: String {
        if let override = ProcessInfo.processInfo.environment["PORTAL_AUTH_BINARY"] { return override }
        var directory = URL(fileURLWithPath: CommandLine.arguments.first ?? ".").deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("portal-auth").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return ".build/debug/portal-auth"
    }
}
