import Foundation

/// The environment of a machine without a display, for the tool under test: this process's environment without
/// `DISPLAY`, `WAYLAND_DISPLAY`, `BROWSER` and the SSH variables, plus `extra`.
enum HeadlessEnvironment {
    static func make(_ extra: [String: String] = [:]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for name in ["DISPLAY", "WAYLAND_DISPLAY", "BROWSER", "SSH_CONNECTION", "SSH_CLIENT", "SSH_TTY"] {
            environment.removeValue(forKey: name)
        }
        return environment.merging(extra) { $1 }
    }
}
