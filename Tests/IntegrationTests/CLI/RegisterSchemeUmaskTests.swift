import Foundation
import Testing
@testable import PortalAuth

/// `register-scheme` under umask 000 (issue 25): every folder and file it (or the desktop tools it runs) creates
/// has an explicit mode, never one another local user can write to (who could then replace the scheme's `.desktop`
/// file and run code as this user when a link opens).
@Suite("register-scheme under umask 000", .serialized)
struct RegisterSchemeUmaskTests {
    @Test(
        "the applications folder, the .desktop file, mimeapps.list and mimeinfo.cache are not writable by others",
        .enabled(
            if: DesktopTool.find("xdg-mime", environment: ProcessInfo.processInfo.environment) != nil
                && DesktopTool.find("update-desktop-database", environment: ProcessInfo.processInfo.environment) != nil)
    )
    func umaskZero() throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("pa-umask-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: home) }
        let data = home.appendingPathComponent("share").path, config = home.appendingPathComponent("config").path
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [
            "-c", #"umask 000 && exec "$0" "$@""#, BinaryLocator.toolPath, "register-scheme", "--scheme",
            "pa-umask-test",
        ]
        process.environment = [
            "HOME": home.path, "XDG_DATA_HOME": data, "XDG_CONFIG_HOME": config,
            "XDG_DATA_DIRS": home.appendingPathComponent("system").path,
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "\(text)")

        let applications = data + "/applications"
        let desktop = applications + "/portal-auth-pa-umask-test.desktop"
        var checked: [String: mode_t] = [:]
        for path in [data, applications, desktop, applications + "/mimeinfo.cache", config, config + "/mimeapps.list"] {
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            checked[path] = info.st_mode & 0o777
            #expect(info.st_mode & 0o022 == 0, "\(path) has mode \(String(info.st_mode & 0o777, radix: 8))")
        }
        #expect(checked[desktop] == 0o644, "\(checked)")
        #expect(checked[applications] == 0o755, "\(checked)")
        #expect(
            checked[config + "/mimeapps.list"] != nil && checked[applications + "/mimeinfo.cache"] != nil,
            "the desktop tools ran: \(checked)")
    }
}
