import Foundation
import PortalAuthCore

/// Runs the desktop's own tools (`xdg-mime`, `update-desktop-database`) with a given environment, so the
/// registration honours the same `XDG_*` folders the desktop and `xdg-open` use.
enum DesktopTool {
    /// What a tool printed and how it ended.
    struct Run: Sendable {
        let status: Int32
        let output: String
    }

    /// Runs `name` (found in the environment's `PATH`) with `arguments`; standard error is kept for messages.
    static func run(_ name: String, _ arguments: [String], environment: [String: String]) throws(SchemeRedirectError)
        -> Run
    {
        guard let executable = find(name, environment: environment) else {
            throw SchemeRedirectError(
                .registrationFailed,
                "\(name) is not installed (or not on PATH); install the Debian packages xdg-utils and desktop-file-utils."
            )
        }
        let process = ChildProcess()
        // Under umask 022 whatever this process's umask is: the tools create mimeapps.list, mimeinfo.cache and
        // folders, which must not end writable by other users (umask 000).
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", #"umask 022 && exec "$0" "$@""#, executable] + arguments
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw SchemeRedirectError(.registrationFailed, "cannot run \(executable): \(error.localizedDescription)")
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data.prefix(8192), as: UTF8.self)
        return Run(status: process.terminationStatus, output: text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Runs `name` and fails unless it exits with 0.
    @discardableResult
    static func require(_ name: String, _ arguments: [String], environment: [String: String])
        throws(SchemeRedirectError) -> String
    {
        let run = try run(name, arguments, environment: environment)
        guard run.status == 0 else {
            let detail = run.output.isEmpty ? "" : ": " + Self.printable(run.output.prefix(500))
            throw SchemeRedirectError(
                .registrationFailed,
                "\(name) \(arguments.joined(separator: " ")) failed with exit status \(run.status)\(detail)")
        }
        return run.output
    }

    /// The path of `name` in `PATH` (or the default system path).
    static func find(_ name: String, environment: [String: String]) -> String? {
        let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for folder in path.split(separator: ":") where !folder.isEmpty {
            let candidate = "\(folder)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Tool output without control characters, for an error message.
    private static func printable(_ text: Substring) -> String {
        String(text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : Character($0) })
    }
}
