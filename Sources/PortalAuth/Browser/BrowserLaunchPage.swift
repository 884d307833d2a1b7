package import Foundation
import Glibc
import PortalAuthCore
import Synchronization

/// A private HTML page that sends the browser on to a URL which must not appear in a process's arguments.
///
/// Every local user can read any process's arguments (`/proc/PID/cmdline`). A sign-in URL there gives away its
/// `state`, PKCE `code_challenge` and `nonce` (another user could start their own sign-in with them and have the
/// waiting tool accept it), and a logout URL its `id_token_hint`. So the browser command gets the address of this
/// page instead: a file readable by the user alone (0600, in a 0700 folder of theirs, under a random name) that
/// forwards at once to the real URL. The page is removed when the sign-in ends (``remove()``, or when the value is
/// released), and at the latest when the process exits.
///
/// Where the page goes (``directory(forCommand:environment:)``): `$PORTAL_AUTH_LAUNCH_DIR` when set; for a browser
/// started from `/snap/bin` (a snap, which sees neither `/tmp` nor hidden folders), that snap's own runtime folder
/// `$XDG_RUNTIME_DIR/snap.NAME/portal-auth`; else `$XDG_RUNTIME_DIR/portal-auth` (a per-user tmpfs, emptied at logout);
/// else `$XDG_CACHE_HOME/portal-auth/launch` (`~/.cache/portal-auth/launch`).
package final class BrowserLaunchPage: Sendable {
    /// The page, as a `file:` URL: what the browser command receives.
    public let fileURL: URL
    private let removed = Mutex(false)

    /// Writes a page that forwards to `target`, in `directory` (created 0700 when missing; refused when it is a
    /// symbolic link, is not a folder, or belongs to another user).
    ///
    /// - Throws: `BrowserError` naming the folder or file that could not be used.
    public init(forwardingTo target: URL, in directory: URL) throws(BrowserError) {
        let folder = directory.standardizedFileURL.path
        try Self.preparePrivateFolder(folder)
        let random: String
        do {
            random = try SecureRandom.token(byteCount: 16)
        } catch {
            throw BrowserError(command: folder, reason: "no random name for the launch page: \(error)")
        }
        // One name for the pages of sign-ins and sign-outs alike: a launch page, whatever it opens.
        let path = folder + "/launch-" + random + ".html"
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw BrowserError(
                command: path, reason: "cannot create the launch page: \(String(cString: strerror(errno)))")
        }
        var failure: Int32 = 0
        do { try writeFully(fd, Array(Self.page(forwardingTo: target).utf8)) } catch { failure = error.errno }
        Glibc.close(fd)
        guard failure == 0 else {
            unlink(path)
            throw BrowserError(
                command: path, reason: "cannot write the launch page: \(String(cString: strerror(failure)))")
        }
        fileURL = URL(fileURLWithPath: path)
        LingeringPages.shared.add(path)
    }

    deinit {
        remove()
    }

    /// Deletes the page (once the browser has been sent on; the sign-in or logout that needed it is over). Idempotent.
    public func remove() {
        let first = removed.withLock { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        unlink(fileURL.path)
        LingeringPages.shared.remove(fileURL.path)
    }

    // MARK: - Where

    /// The folder for the pages of a browser started with `command` (its first word is looked up in `PATH`); see the
    /// type's description for the order.
    public static func directory(
        forCommand command: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> URL {
        if let chosen = environment["PORTAL_AUTH_LAUNCH_DIR"], !chosen.isEmpty { return URL(fileURLWithPath: chosen) }
        let runtime = environment["XDG_RUNTIME_DIR"].flatMap { $0.hasPrefix("/") ? $0 : nil }
        if let runtime, let command, let snap = snapName(of: command, path: environment["PATH"] ?? "/usr/bin:/bin") {
            return URL(fileURLWithPath: runtime).appending(path: "snap.\(snap)/portal-auth")
        }
        if let runtime, isPrivateFolder(runtime) { return URL(fileURLWithPath: runtime).appending(path: "portal-auth") }
        if let cache = environment["XDG_CACHE_HOME"], cache.hasPrefix("/") {
            return URL(fileURLWithPath: cache).appending(path: "portal-auth/launch")
        }
        let home = environment["HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? NSHomeDirectory()
        return URL(fileURLWithPath: home).appending(path: ".cache/portal-auth/launch")
    }

    /// The snap a command runs (`/snap/bin/firefox` → `firefox`), when its first word is found in `/snap/bin`.
    static func snapName(of command: String, path: String) -> String? {
        guard let first = CommandBrowserOpener.splitWords(command).first else { return nil }
        let candidates = first.contains("/") ? [first] : path.split(separator: ":").map { "\($0)/\(first)" }
        for candidate in candidates where access(candidate, X_OK) == 0 {
            guard candidate.hasPrefix("/snap/bin/") else { return nil }
            let name = String(candidate.dropFirst("/snap/bin/".count)).split(separator: ".").first.map(String.init)
            return name.flatMap { $0.isEmpty ? nil : $0 }
        }
        return nil
    }

    // MARK: - The page

    /// The HTML: a refresh to `target`, a script doing the same, and a link for a browser that does neither.
    /// Nothing is loaded from elsewhere and no `Referer` is sent.
    static func page(forwardingTo target: URL) -> String {
        let attribute = HTMLText.escaped(target.absoluteString)
        let script = JSONValue.string(target.absoluteString).serialized()
            .replacingOccurrences(of: "<", with: "\\u003c").replacingOccurrences(of: ">", with: "\\u003e")
        return """
            <!DOCTYPE html>
            <html><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">
            <meta http-equiv="refresh" content="0;url=\(attribute)">
            <title>Opening the sign-in page</title></head>
            <body><p>Opening the sign-in page. If nothing happens, <a id="continue" rel="noreferrer" href="\(attribute)">continue here</a>.</p>
            <script>window.location.replace(\(script));</script></body></html>

            """
    }

    // MARK: - The folder

    /// Creates `folder` (and missing parents) and makes sure it is a real folder of this user, closed to others.
    private static func preparePrivateFolder(_ folder: String) throws(BrowserError) {
        var built = ""
        for component in folder.split(separator: "/") {
            built += "/" + component
            if mkdir(built, 0o700) != 0 && errno != EEXIST {
                throw BrowserError(
                    command: built,
                    reason: "cannot create the folder for the launch page: \(String(cString: strerror(errno)))")
            }
        }
        var info = stat()
        guard lstat(folder, &info) == 0 else {
            throw BrowserError(
                command: folder,
                reason: "cannot use the folder for the launch page: \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & S_IFMT == S_IFDIR, info.st_uid == getuid() else {
            throw BrowserError(
                command: folder,
                reason:
                    "the folder for the launch page is not a folder of this user (or is a symbolic link); remove it, or set PORTAL_AUTH_LAUNCH_DIR"
            )
        }
        if info.st_mode & 0o077 != 0, chmod(folder, 0o700) != 0 {
            throw BrowserError(
                command: folder,
                reason:
                    "cannot close the folder for the launch page to other users: \(String(cString: strerror(errno)))")
        }
    }

    /// Whether `path` is a folder of this user that others cannot enter.
    private static func isPrivateFolder(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR && info.st_uid == getuid()
            && info.st_mode & 0o077 == 0
    }
}
