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
/// else `$XDG_CACHE_HOME/portal-auth/launch` (`~/.cache/portal-auth/launch`). Every component of that folder is
/// created and opened without following a link another user could have planted, its owner and mode checked
/// (`SafePath`); when one fails, the page goes to `~/.cache/portal-auth/launch` of the user's own home (from the
/// password database) instead.
///
/// A process killed with SIGKILL cannot remove its page; the next page made in the same folder first removes the
/// pages left there (``sweepStalePages(in:now:)``).
package final class BrowserLaunchPage: Sendable {
    /// The page, as a `file:` URL: what the browser command receives.
    public let fileURL: URL
    private let removed = Mutex(false)

    /// Writes a page that forwards to `target`, in `directory` (created 0700 when missing; when it or a folder above
    /// it is a symbolic link, is not a folder, or another user owns or can write it, the user's own
    /// `~/.cache/portal-auth/launch` instead).
    ///
    /// - Throws: `BrowserError` naming the folder or file that could not be used.
    public init(forwardingTo target: URL, in directory: URL) throws(BrowserError) {
        let folder = try Self.preparePrivateFolder(directory.standardizedFileURL.path)
        Self.sweepStalePages(in: folder)
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

    /// Creates `folder` (and missing parents) as a real folder of this user, closed to others, every component
    /// checked (`SafePath`); when that fails, the user's own `~/.cache/portal-auth/launch`. Returns the folder used.
    private static func preparePrivateFolder(_ folder: String) throws(BrowserError) -> String {
        let refusal: PathProblem
        do {
            return try SafePath.makeFolder(folder, mode: 0o700, private: true)
        } catch {
            refusal = error
        }
        if let home = passwordDatabaseHome() {
            let fallback = home + "/.cache/portal-auth/launch"
            if fallback != folder, let made = try? SafePath.makeFolder(fallback, mode: 0o700, private: true) {
                return made
            }
        }
        throw BrowserError(
            command: folder,
            reason: "cannot use the folder for the launch page: \(refusal.message(showingPaths: DisplayText.path)); "
                + "or set PORTAL_AUTH_LAUNCH_DIR to a folder of your own")
    }

    /// The home folder the password database gives this user (not `HOME`, which names the folder that failed).
    private static func passwordDatabaseHome() -> String? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(geteuid(), &entry, &buffer, buffer.count, &result) == 0, result != nil, let home = entry.pw_dir
        else { return nil }
        let path = String(cString: home)
        return path.hasPrefix("/") ? path : nil
    }

    // MARK: - Leftovers

    /// How old a page must be before a later run removes it: far longer than a browser takes to load it.
    static let stalePageAge: Int = 10 * 60

    /// Removes the pages earlier runs left in `folder` (after SIGKILL, which no handler sees): regular files of this
    /// user named as this type names them (`launch-`, 22 random characters, `.html`), last changed more than
    /// ``stalePageAge`` seconds before `now` (a page of a run still going is younger). Returns the names removed.
    @discardableResult
    static func sweepStalePages(in folder: String, now: time_t = time(nil)) -> [String] {
        guard let stream = opendir(folder) else { return [] }
        defer { closedir(stream) }
        let descriptor = dirfd(stream)
        var removed: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard isPageName(name) else { continue }
            var info = stat()
            guard fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0, info.st_mode & S_IFMT == S_IFREG,
                info.st_uid == geteuid(), now - info.st_mtim.tv_sec > stalePageAge
            else { continue }
            if unlinkat(descriptor, name, 0) == 0 { removed.append(name) }
        }
        return removed
    }

    /// Whether `name` is a page's: `launch-` + 22 characters of base64url + `.html`.
    static func isPageName(_ name: String) -> Bool {
        let utf8 = Array(name.utf8)
        guard utf8.count == 7 + 22 + 5, name.hasPrefix("launch-"), name.hasSuffix(".html") else { return false }
        return utf8[7..<29].allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2D || byte == 0x5F
        }
    }

    /// Whether `path` is a folder of this user that others cannot enter.
    private static func isPrivateFolder(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR && info.st_uid == getuid()
            && info.st_mode & 0o077 == 0
    }
}
