import Foundation
import PortalAuth
import Glibc

/// A desktop session for the custom-scheme tests: an Xvfb display and private `XDG_DATA_HOME`, `XDG_CONFIG_HOME`
/// and `XDG_RUNTIME_DIR`, with no desktop named (xdg-utils' generic path: `xdg-mime query default` and the
/// `.desktop` file's `Exec`). Xvfb is ended and the folders removed when released.
final class VirtualDesktop: @unchecked Sendable {
    let folder: URL
    /// The variables that make the tool, the browser driver and xdg-open use this desktop.
    let environment: [String: String]
    private let xvfb: ChildProcess

    init() throws {
        var template = Array("\(NSTemporaryDirectory())/pa-desktop-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw POSIXError(.EIO) }
        folder = URL(fileURLWithPath: String(cString: made))
        for name in ["data", "config", "runtime"] {
            try FileManager.default.createDirectory(
                at: folder.appendingPathComponent(name), withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        }
        xvfb = ChildProcess()
        xvfb.executableURL = URL(fileURLWithPath: "/usr/bin/Xvfb")
        xvfb.arguments = ["-displayfd", "1", "-nolisten", "tcp", "-screen", "0", "1280x800x24"]
        let output = Pipe()
        xvfb.standardOutput = output
        xvfb.standardError = FileHandle.nullDevice
        xvfb.standardInput = FileHandle.nullDevice
        try xvfb.run()
        let display = readOutput(of: output, until: "\n", timeout: .seconds(30)).trimmingCharacters(
            in: .whitespacesAndNewlines)
        guard !display.isEmpty, display.allSatisfy(\.isNumber) else {
            xvfb.terminate()
            throw POSIXError(.ENODEV)
        }
        environment = [
            "DISPLAY": ":\(display)", "WAYLAND_DISPLAY": "",
            // No desktop environment named: xdg-open takes its generic path.
            "XDG_CURRENT_DESKTOP": "", "DESKTOP_SESSION": "", "KDE_FULL_SESSION": "", "GNOME_DESKTOP_SESSION_ID": "",
            "BROWSER": "",
            "HOME": folder.path,
            "XDG_DATA_HOME": folder.appendingPathComponent("data").path,
            "XDG_CONFIG_HOME": folder.appendingPathComponent("config").path,
            "XDG_RUNTIME_DIR": folder.appendingPathComponent("runtime").path,
            "XDG_DATA_DIRS": "/usr/local/share:/usr/share",
        ]
    }

    deinit {
        // SIGKILL: the test runner's children may inherit a blocked SIGTERM.
        if xvfb.isRunning { kill(xvfb.processIdentifier, SIGKILL) }
        xvfb.waitUntilExit()
        try? FileManager.default.removeItem(at: folder)
    }

    /// The sign-in channel folder inside `XDG_RUNTIME_DIR`.
    var channelFolder: String { folder.appendingPathComponent("runtime/portal-auth").path }

    /// The path of a file in this desktop's folder.
    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }
}
