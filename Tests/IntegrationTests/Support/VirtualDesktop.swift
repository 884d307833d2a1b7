import Foundation
import PortalAuth
import Glibc
import TestSupport

/// A desktop session for the custom-scheme tests: an Xvfb display and private `XDG_DATA_HOME`, `XDG_CONFIG_HOME`
/// and `XDG_RUNTIME_DIR`, with no desktop named (xdg-utils' generic path: `xdg-mime query default` and the
/// `.desktop` file's `Exec`). Xvfb is ended and the folders removed when released.
final class VirtualDesktop: @unchecked Sendable {
    let folder: URL
    /// The variables that make the tool, the browser driver and xdg-open use this desktop.
    let environment: [String: String]
    private let xvfb: TestServerProcess

    init() throws {
        var template = Array("\(NSTemporaryDirectory())/pa-desktop-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw POSIXError(.EIO) }
        folder = URL(fileURLWithPath: String(cString: made))
        for name in ["data", "config", "runtime"] {
            try FileManager.default.createDirectory(
                at: folder.appendingPathComponent(name), withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        }
        // Xvfb writes the number of the display it chose on its standard output (-displayfd 1) once it accepts
        // clients.
        xvfb = try TestServerProcess(
            "/usr/bin/Xvfb", ["-displayfd", "1", "-nolisten", "tcp", "-screen", "0", "1280x800x24"],
            readiness: .line("a display number") { !$0.isEmpty && $0.allSatisfy(\.isNumber) }, deadline: .seconds(30))
        let display = xvfb.readyLine ?? ""
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
        // No grace after SIGTERM: the test runner's children may inherit a blocked SIGTERM.
        xvfb.stop(grace: .zero)
        try? FileManager.default.removeItem(at: folder)
    }

    /// The sign-in channel folder inside `XDG_RUNTIME_DIR`.
    var channelFolder: String { folder.appendingPathComponent("runtime/portal-auth").path }

    /// The path of a file in this desktop's folder.
    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }
}
