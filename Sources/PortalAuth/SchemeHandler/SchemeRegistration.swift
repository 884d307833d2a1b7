public import Foundation
import Glibc
import PortalAuthCore
import PortalAuthStore

/// Registers a program as the desktop's handler of a URL scheme, the way Linux desktops hand a browser's
/// navigation to `my-maps-app://…` to an application: a `.desktop` file with `MimeType=x-scheme-handler/<scheme>;`
/// in `$XDG_DATA_HOME/applications`, `update-desktop-database` on that folder, and `xdg-mime default`.
///
/// ```swift
/// let registration = try SchemeRegistration(scheme: "my-maps-app", command: ["/opt/maps/bin/maps", "--sign-in-redirect"])
/// if case .notRegistered = registration.status() { try registration.register() }
/// ```
/// The handler is started with the address as its last argument (`%u`) and should call
/// ``SchemeRedirectForwarder/forward(_:environment:timeout:)`` with it. A scheme another application handles is
/// left alone unless `force` is given.
public struct SchemeRegistration: Sendable {
    /// Whether, and by whom, the scheme is handled.
    public enum Status: Sendable, Equatable {
        /// This registration's `.desktop` file exists and is the scheme's default handler.
        case registered
        /// No application is the scheme's default handler (or this one's file is missing).
        case notRegistered
        /// Another application (this desktop file ID) is the scheme's default handler.
        case handledBy(String)
    }

    /// The scheme, in lower case (`my-maps-app`).
    public let scheme: String
    /// The desktop file ID, e.g. `portal-auth-my-maps-app.desktop` (the default also when a blank one is given).
    public let desktopFileID: String
    /// The name shown where desktops list handlers.
    public let applicationName: String
    /// The program and its arguments; the address is added as the last argument.
    public let command: [String]
    /// The environment whose `XDG_DATA_HOME`, `XDG_CONFIG_HOME`, `HOME` and `PATH` are used.
    public let environment: [String: String]

    /// A registration of `command` for `scheme`.
    ///
    /// - Throws: ``SchemeRedirectError`` `.invalidScheme` for a scheme that is not a custom one (http, https, file,
    ///   or not RFC 3986 syntax), or a command with control characters.
    public init(
        scheme: String,
        command: [String],
        desktopFileID: String? = nil,
        applicationName: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(SchemeRedirectError) {
        let lowered = scheme.lowercased()
        guard let url = URL(string: "\(lowered)://x"), CustomSchemeRedirect(url) != nil else {
            throw SchemeRedirectError(
                .invalidScheme,
                "\(MessagePart.quoted(Self.printable(scheme), or: "an empty scheme")) is not a custom URL scheme (letters, digits, +, - and ., starting with a letter; not http, https or file)."
            )
        }
        guard !command.isEmpty,
            command.allSatisfy({ !$0.unicodeScalars.contains { $0.properties.generalCategory == .control } })
        else {
            throw SchemeRedirectError(
                .invalidScheme, "the handler command for \(lowered) is empty or has control characters.")
        }
        self.scheme = lowered
        self.command = command
        self.desktopFileID =
            MessagePart.nonBlank(desktopFileID)
            ?? "portal-auth-\(lowered.replacingOccurrences(of: "+", with: "_")).desktop"
        self.applicationName = applicationName ?? "PortalAuth sign-in (\(lowered))"
        self.environment = environment
    }

    /// The registration of `portal-auth handle-redirect` (the running program, unless `executable` is given).
    public static func portalAuth(
        scheme: String, executable: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(SchemeRedirectError) -> SchemeRegistration {
        let program = executable ?? Self.runningExecutable()
        return try SchemeRegistration(scheme: scheme, command: [program, "handle-redirect"], environment: environment)
    }

    // MARK: - Places

    /// `$XDG_DATA_HOME/applications`, else `~/.local/share/applications`.
    public var applicationsDirectory: String {
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") {
            return (data as NSString).appendingPathComponent("applications")
        }
        return (home as NSString).appendingPathComponent(".local/share/applications")
    }

    /// The `.desktop` file this registration writes.
    public var desktopFilePath: String { (applicationsDirectory as NSString).appendingPathComponent(desktopFileID) }

    /// `x-scheme-handler/<scheme>`.
    public var mimeType: String { "x-scheme-handler/\(scheme)" }

    private var home: String { environment["HOME"] ?? NSHomeDirectory() }

    private var configDirectory: String {
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") { return config }
        return (home as NSString).appendingPathComponent(".config")
    }

    // MARK: - Status

    /// Who handles the scheme now, by `xdg-mime query default`.
    public func status() throws(SchemeRedirectError) -> Status {
        let run = try DesktopTool.run("xdg-mime", ["query", "default", mimeType], environment: environment)
        let current = run.status == 0 ? run.output.split(separator: "\n").first.map(String.init) ?? "" : ""
        if current.isEmpty { return .notRegistered }
        if current == desktopFileID {
            return FileManager.default.fileExists(atPath: desktopFilePath) ? .registered : .notRegistered
        }
        return .handledBy(current)
    }

    // MARK: - Registering

    /// Writes the `.desktop` file, updates the desktop database and makes it the scheme's default handler.
    ///
    /// - Parameter force: take the scheme over from another application that handles it.
    /// - Throws: ``SchemeRedirectError`` `.schemeOwnedByAnotherApplication` (without `force`), `.registrationFailed`.
    public func register(force: Bool = false) throws(SchemeRedirectError) {
        if case .handledBy(let other) = try status(), !force {
            throw SchemeRedirectError(
                .schemeOwnedByAnotherApplication,
                "\(scheme): links are handled by \(other), another application; it was left alone. "
                    + "Take the scheme over only if that application is not needed for it (register(force: true)).")
        }
        // Explicit modes whatever the umask (000 would leave the folder and files writable by everyone, and another
        // user could then replace the .desktop file and run code as this one).
        try Self.createDirectories(applicationsDirectory)
        try Self.writeFile(Data(desktopEntry.utf8), to: desktopFilePath, mode: 0o644)
        try DesktopTool.require("update-desktop-database", [applicationsDirectory], environment: environment)
        try DesktopTool.require("xdg-mime", ["default", desktopFileID, mimeType], environment: environment)
        try closeToOthers(desktopToolFiles)
        let now = try status()
        guard now == .registered else {
            throw SchemeRedirectError(
                .registrationFailed,
                "xdg-mime did not make \(desktopFileID) the handler of \(mimeType) (it reports \(now)); check \(configDirectory)/mimeapps.list."
            )
        }
    }

    /// Removes the `.desktop` file and this handler's default-application entries; true when something was removed.
    @discardableResult
    public func unregister() throws(SchemeRedirectError) -> Bool {
        var removed = false
        if FileManager.default.fileExists(atPath: desktopFilePath) {
            guard unlink(desktopFilePath) == 0 else {
                throw SchemeRedirectError(
                    .registrationFailed, "cannot remove \(desktopFilePath): \(String(cString: strerror(errno)))")
            }
            removed = true
        }
        for list in [
            (configDirectory as NSString).appendingPathComponent("mimeapps.list"),
            (applicationsDirectory as NSString).appendingPathComponent("mimeapps.list"),
        ] {
            removed = try removeDefault(from: list) || removed
        }
        if FileManager.default.fileExists(atPath: applicationsDirectory) {
            try DesktopTool.require("update-desktop-database", [applicationsDirectory], environment: environment)
            try closeToOthers(desktopToolFiles)
        }
        return removed
    }

    // MARK: - The desktop entry

    /// The `.desktop` file's text.
    public var desktopEntry: String {
        let exec = (command.map(Self.execArgument) + ["%u"]).joined(separator: " ")
        return """
            [Desktop Entry]
            Type=Application
            Name=\(applicationName)
            Comment=Receives \(scheme): sign-in redirects and hands them to the waiting sign-in
            Exec=\(exec)
            Terminal=false
            NoDisplay=true
            MimeType=\(mimeType);

            """
    }

    /// One `Exec` argument: quoted when needed (`"`, `` ` ``, `$` and `\` escaped inside quotes), `%` doubled, and
    /// backslashes doubled once more for the key file's own escaping (Desktop Entry Specification, "The Exec key").
    static func execArgument(_ argument: String) -> String {
        let plain = argument.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "/._-+,=:@%".contains($0)) }
        var text = argument.replacingOccurrences(of: "%", with: "%%")
        if !plain || argument.isEmpty {
            var quoted = ""
            for character in text {
                if "\"`$\\".contains(character) { quoted.append("\\") }
                quoted.append(character)
            }
            text = "\"\(quoted)\""
        }
        return text.replacingOccurrences(of: "\\", with: "\\\\")
    }

    // MARK: - Helpers

    /// Removes this desktop file ID from the scheme's line in one `mimeapps.list`; true when the file changed.
    private func removeDefault(from list: String) throws(SchemeRedirectError) -> Bool {
        guard let text = try? String(contentsOfFile: list, encoding: .utf8) else { return false }
        var changed = false
        var lines: [String] = []
        for line in text.components(separatedBy: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == mimeType else {
                lines.append(line)
                continue
            }
            let ids = parts[1].split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
                !$0.isEmpty
            }
            let kept = ids.filter { $0 != desktopFileID }
            guard kept.count != ids.count else {
                lines.append(line)
                continue
            }
            changed = true
            if !kept.isEmpty { lines.append("\(mimeType)=\(kept.joined(separator: ";"));") }
        }
        guard changed else { return false }
        var info = stat()
        let mode = lstat(list, &info) == 0 ? info.st_mode & 0o644 : 0o644
        try Self.writeFile(Data(lines.joined(separator: "\n").utf8), to: list, mode: mode)
        return true
    }

    // MARK: - Files with explicit modes

    /// The files the desktop tools write: their modes are checked after each run.
    private var desktopToolFiles: [String] {
        [
            (configDirectory as NSString).appendingPathComponent("mimeapps.list"),
            (applicationsDirectory as NSString).appendingPathComponent("mimeapps.list"),
            (applicationsDirectory as NSString).appendingPathComponent("mimeinfo.cache"),
        ]
    }

    /// Creates `path` and its missing parents, each set to exactly 0755 (an existing folder is left as it is); every
    /// component is created and opened without following a link another user could have planted, its owner and mode
    /// checked (`SafePath`).
    static func createDirectories(_ path: String) throws(SchemeRedirectError) {
        do {
            try SafePath.makeFolder(path, mode: 0o755, private: false)
        } catch {
            throw SchemeRedirectError(
                .registrationFailed,
                "cannot use \(DisplayText.path(path)): \(error.message(showingPaths: DisplayText.path))")
        }
    }

    /// Replaces `path` with `data` atomically, the new file made with exactly `mode` from its creation (a temporary
    /// file created exclusively, never through a link, then renamed over `path`).
    static func writeFile(_ data: Data, to path: String, mode: mode_t) throws(SchemeRedirectError) {
        let temporary = path + ".tmp\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard descriptor >= 0 else {
            throw SchemeRedirectError(.registrationFailed, "cannot write \(path): \(String(cString: strerror(errno)))")
        }
        var failure: Int32 = fchmod(descriptor, mode) == 0 ? 0 : errno
        if failure == 0 {
            do { try writeFully(descriptor, data) } catch { failure = error.errno }
        }
        if close(descriptor) != 0 && failure == 0 { failure = errno }
        if failure == 0 && rename(temporary, path) != 0 { failure = errno }
        if failure != 0 {
            unlink(temporary)
            throw SchemeRedirectError(
                .registrationFailed, "cannot write \(path): \(String(cString: strerror(failure)))")
        }
    }

    /// Removes the group and other write bits from those of `files` that are this user's (the desktop tools run
    /// under umask 022, see `DesktopTool`; this also mends files an earlier run under umask 000 left open).
    private func closeToOthers(_ files: [String]) throws(SchemeRedirectError) {
        for file in files {
            var info = stat()
            guard lstat(file, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == getuid(),
                info.st_mode & 0o022 != 0
            else { continue }
            guard chmod(file, info.st_mode & 0o755) == 0 else {
                throw SchemeRedirectError(
                    .registrationFailed,
                    "\(file) can be written by other users and its mode cannot be changed: \(String(cString: strerror(errno)))"
                )
            }
        }
    }

    /// The running program's path (`/proc/self/exe`), so the desktop starts this very binary.
    static func runningExecutable() -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    private static func printable(_ text: String) -> String {
        String(text.unicodeScalars.prefix(80).map { $0.properties.generalCategory == .control ? "?" : Character($0) })
    }
}
