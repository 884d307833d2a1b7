import Foundation
import Glibc

/// The Windows Subsystem for Linux, whose Windows browser a person sees whatever `DISPLAY` says (WSL2 forwards the
/// distribution's loopback ports to Windows, so the redirect reaches the loopback listener).
///
/// Recognised by `WSL_DISTRO_NAME` (set by WSL in every session), or by "microsoft" in the kernel release (`uname -r`,
/// `/proc/sys/kernel/osrelease`: `5.15.153.1-microsoft-standard-WSL2`).
package struct WindowsSubsystem: Sendable, Equatable {
    /// The distribution's name (`WSL_DISTRO_NAME`), for the `\\wsl$\NAME\…` paths Windows programs read; nil when
    /// only the kernel release told.
    package let distribution: String?
    /// The folders of `PATH`, where `wslview`, `cmd.exe` and `powershell.exe` are looked for.
    private let searchPath: [String]

    /// WSL as `environment` and `kernelRelease` describe it, or nil when this is not WSL.
    package init?(environment: [String: String], kernelRelease: String?) {
        let name = environment["WSL_DISTRO_NAME"].flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0 }
        guard name != nil || kernelRelease?.lowercased().contains("microsoft") == true else { return nil }
        distribution = name
        searchPath = (environment["PATH"] ?? "").split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
    }

    /// This machine's kernel release (`/proc/sys/kernel/osrelease`), or nil when it cannot be read.
    package static func kernelRelease() -> String? {
        guard let data = FileManager.default.contents(atPath: "/proc/sys/kernel/osrelease") else { return nil }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The opener of the Windows default browser: `wslview` when it is on `PATH`, else `cmd.exe /c start ""` or
    /// `powershell.exe Start-Process` (which need the distribution's name to give Windows a path it can read); nil
    /// when none of them can be used.
    package func browserOpener() -> CommandBrowserOpener? {
        if let wslview = find("wslview") {
            return CommandBrowserOpener(
                commands: [CommandBrowserOpener.quotedWord(wslview)], isVisibleWithoutDisplay: true)
        }
        guard let distribution else { return nil }
        let launcher: String
        if let cmd = find("cmd.exe") {
            launcher = "\(CommandBrowserOpener.quotedWord(cmd)) /c start \"\" %s"
        } else if let powershell = find("powershell.exe") {
            launcher =
                "\(CommandBrowserOpener.quotedWord(powershell)) -NoProfile -NonInteractive -Command Start-Process %s"
        } else {
            return nil
        }
        var opener = CommandBrowserOpener(commands: [launcher], isVisibleWithoutDisplay: true)
        opener.addressStyle = .windowsPath(distribution: distribution)
        return opener
    }

    /// Why ``browserOpener()`` found no Windows browser, and the fix: nil when it finds one.
    ///
    /// WSL puts the Windows folders on `PATH` unless `/etc/wsl.conf` says `appendWindowsPath=false`; without them and
    /// without `wslview` (Debian's `wslu`) nothing here reaches the Windows browser.
    package var missingOpenerReason: String? {
        guard browserOpener() == nil else { return nil }
        if distribution == nil, find("cmd.exe") != nil || find("powershell.exe") != nil {
            return "this is WSL, but WSL_DISTRO_NAME is not set, which cmd.exe and powershell.exe need to reach "
                + "this distribution's files: run from a WSL session, or install wslu (wslview)"
        }
        return "this is WSL, but neither wslview nor cmd.exe or powershell.exe is on PATH (appendWindowsPath=false "
            + "in /etc/wsl.conf leaves the Windows folders out): install wslu (wslview), or add "
            + "/mnt/c/Windows/System32 to PATH"
    }

    /// `path` as Windows programs reach the distribution's files: `\\wsl$\NAME\run\user\1000\…`.
    package static func windowsPath(of path: String, distribution: String) -> String {
        "\\\\wsl$\\" + distribution + path.replacingOccurrences(of: "/", with: "\\")
    }

    /// The executable `name` in the first folder of `PATH` that has one.
    private func find(_ name: String) -> String? {
        searchPath.lazy.map { $0 + "/" + name }.first { access($0, X_OK) == 0 }
    }
}
