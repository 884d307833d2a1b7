package import Glibc

/// Paths resolved one component at a time, so that no other user of the machine can decide what they name: the
/// configuration files that decide where a token goes are read through ``checkFile(_:opened:)``, and every folder the
/// library and the tool create (launch pages, store, lock, network credentials, snap browsers' folder, scheme-handler
/// sockets) is made through ``makeFolder(_:mode:private:)``.
///
/// The rule, as OpenSSH's `StrictModes` applies it to `~/.ssh`, for every folder the resolution looks in (each folder
/// of the path and of every symbolic link's target, from `/` down):
/// - the folder belongs to this user or to root;
/// - no group or other user can write it, except a shared folder with the sticky bit (`/tmp`, mode 1777): there the
///   entry looked up must belong to this user or to root, as the sticky bit then lets nobody else rename or remove it.
///
/// A symbolic link is followed only when the folder it sits in passes that rule (nobody else could have planted or
/// changed it); its target is then resolved the same way. Each folder is opened with `openat` and
/// `O_NOFOLLOW | O_DIRECTORY` from the one before, so a name swapped between the check and the use is never followed.
/// The file or folder at the end must belong to this user (or, for a file read, to root) and no group or other user
/// may write it; a folder to make must not be a symbolic link itself.
///
/// Where this process's user namespace does not map root (a Flatpak or other unprivileged sandbox), everything of the
/// host's root shows as the kernel's overflow user (normally `nobody`); that user then counts as root.
package enum SafePath {
    /// What a resolution ended on.
    package struct Resolved: Sendable {
        /// The path with every symbolic link resolved.
        package let path: String
        /// `lstat` of the last component; nil when it does not exist.
        package let status: stat?
        /// True when the path led to an object without a name (`/dev/fd/N` of a pipe): only its descriptor can be
        /// checked.
        package let anonymous: Bool
    }

    // MARK: - Reading a file

    /// Checks that no other user could have written or placed the file open at `descriptor`, opened from `path`.
    ///
    /// - Throws: ``PathProblem`` naming the file or folder that fails the rule (see the type's description).
    package static func checkFile(_ path: String, opened descriptor: Int32) throws(PathProblem) {
        var opened = stat()
        guard fstat(descriptor, &opened) == 0 else { throw PathProblem(path: path, failed: "fstat", errno: errno) }
        let resolved = try resolve(absolute(path), creatingWith: nil)
        if !resolved.anonymous {
            guard let found = resolved.status, found.st_dev == opened.st_dev, found.st_ino == opened.st_ino else {
                throw PathProblem(path: resolved.path, reason: .replaced, owner: opened.st_uid, mode: opened.st_mode)
            }
        }
        let shown = resolved.anonymous ? path : resolved.path
        guard isTrusted(opened.st_uid, rootCounts: true) else {
            throw PathProblem(path: shown, reason: .ownedByOther, owner: opened.st_uid, mode: opened.st_mode)
        }
        guard opened.st_mode & 0o022 == 0 else {
            throw PathProblem(path: shown, reason: .writableByOthers, owner: opened.st_uid, mode: opened.st_mode)
        }
    }

    // MARK: - Making a folder

    /// Creates `path` and any missing folder above it (each made with exactly `mode`), and checks every component
    /// on the way; returns the path with its symbolic links resolved.
    ///
    /// The folder at the end must belong to this user. With `private`, it is made exactly 0700 when it has any group
    /// or other bit; without, it is refused when group or others can write it (an existing `0755` folder is kept).
    ///
    /// - Throws: ``PathProblem`` naming the component that fails the rule, or the call that failed.
    @discardableResult
    package static func makeFolder(_ path: String, mode: mode_t = 0o700, private: Bool) throws(PathProblem) -> String {
        let resolved = try resolve(absolute(path), creatingWith: mode, privateFolder: `private`)
        return resolved.path
    }

    /// Checks `path` as ``makeFolder(_:mode:private:)`` does without creating anything; false when a component is
    /// missing.
    package static func checkFolder(_ path: String, private: Bool) throws(PathProblem) -> Bool {
        let resolved = try resolve(absolute(path), creatingWith: nil, privateFolder: `private`)
        return resolved.status != nil
    }

    // MARK: - Resolution

    /// `O_PATH` (Glibc's module leaves it out: it is a GNU extension): a descriptor that only names a folder, which
    /// needs no read permission on it. The same value on every Linux architecture Swift runs on.
    static let openPathOnly: Int32 = 0o10_000_000

    /// The longest chain of symbolic links followed, as the kernel's limit.
    static let maximumLinks = 40

    /// Resolves `path` (absolute) from `/`, checking each folder looked in; with `mode`, creates missing folders.
    /// `privateFolder` (nil: a file is read) says what the last component must be when it is a folder to make.
    static func resolve(_ path: String, creatingWith mode: mode_t?, privateFolder: Bool? = nil) throws(PathProblem)
        -> Resolved
    {
        var folders: [(descriptor: Int32, path: String, status: stat)] = []
        defer { for folder in folders { close(folder.descriptor) } }
        func openRoot() throws(PathProblem) {
            for folder in folders { close(folder.descriptor) }
            folders.removeAll()
            let descriptor = open("/", openPathOnly | O_DIRECTORY | O_CLOEXEC)
            var info = stat()
            guard descriptor >= 0, fstat(descriptor, &info) == 0 else {
                throw PathProblem(path: "/", failed: "open", errno: errno)
            }
            folders.append((descriptor, "", info))
        }
        try openRoot()
        var pending = Array(path.split(separator: "/").map(String.init).reversed())
        var links = 0
        while let name = pending.popLast() {
            if name == "." { continue }
            if name == ".." {
                if folders.count > 1 { close(folders.removeLast().descriptor) }
                continue
            }
            let folder = folders[folders.count - 1]
            let entryPath = folder.path + "/" + name
            let shownFolder = folder.path.isEmpty ? "/" : folder.path
            guard isTrusted(folder.status.st_uid, rootCounts: true) else {
                throw PathProblem(
                    path: shownFolder, reason: .ownedByOther, owner: folder.status.st_uid, mode: folder.status.st_mode)
            }
            let shared = folder.status.st_mode & 0o022 != 0
            let sticky = folder.status.st_mode & S_ISVTX != 0
            if shared && !sticky {
                throw PathProblem(
                    path: shownFolder, reason: .writableByOthers, owner: folder.status.st_uid,
                    mode: folder.status.st_mode)
            }
            var info = stat()
            if fstatat(folder.descriptor, name, &info, AT_SYMLINK_NOFOLLOW) != 0 {
                let code = errno
                guard code == ENOENT, let mode else {
                    if code == ENOENT {
                        let rest = pending.reversed().joined(separator: "/")
                        return Resolved(
                            path: rest.isEmpty ? entryPath : entryPath + "/" + rest, status: nil, anonymous: false)
                    }
                    throw PathProblem(path: entryPath, failed: "stat", errno: code)
                }
                if mkdirat(folder.descriptor, name, mode) == 0 {
                    // The umask may have removed bits; the folder just made gets exactly `mode`.
                    guard fchmodat(folder.descriptor, name, mode, 0) == 0 else {
                        throw PathProblem(path: entryPath, failed: "chmod", errno: errno)
                    }
                } else if errno != EEXIST {
                    throw PathProblem(path: entryPath, failed: "mkdir", errno: errno)
                }
                pending.append(name)  // looked up again, and checked as any other
                continue
            }
            if shared && !isTrusted(info.st_uid, rootCounts: true) {
                throw PathProblem(
                    path: entryPath, reason: .replaceableInSharedFolder(shownFolder), owner: info.st_uid,
                    mode: info.st_mode)
            }
            switch info.st_mode & S_IFMT {
            case S_IFLNK:
                if pending.isEmpty, privateFolder != nil {
                    throw PathProblem(path: entryPath, reason: .symbolicLink, owner: info.st_uid, mode: info.st_mode)
                }
                links += 1
                guard links <= maximumLinks else {
                    throw PathProblem(path: entryPath, failed: "readlink", errno: ELOOP)
                }
                let target = try linkTarget(folder.descriptor, name, path: entryPath)
                if pending.isEmpty, isAnonymousObject(target) {
                    return Resolved(path: entryPath, status: nil, anonymous: true)
                }
                if target.hasPrefix("/") { try openRoot() }
                pending.append(contentsOf: target.split(separator: "/").map(String.init).reversed())
            case S_IFDIR:
                if pending.isEmpty {
                    try checkLastFolder(folder.descriptor, name, path: entryPath, status: info, privateFolder)
                    return Resolved(path: entryPath, status: info, anonymous: false)
                }
                let descriptor = openat(folder.descriptor, name, openPathOnly | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                guard descriptor >= 0 else { throw PathProblem(path: entryPath, failed: "open", errno: errno) }
                var opened = stat()
                guard fstat(descriptor, &opened) == 0 else {
                    let code = errno
                    close(descriptor)
                    throw PathProblem(path: entryPath, failed: "fstat", errno: code)
                }
                folders.append((descriptor, entryPath, opened))
            default:
                guard pending.isEmpty else { throw PathProblem(path: entryPath, failed: "open", errno: ENOTDIR) }
                if privateFolder != nil {
                    throw PathProblem(path: entryPath, reason: .notAFolder, owner: info.st_uid, mode: info.st_mode)
                }
                return Resolved(path: entryPath, status: info, anonymous: false)
            }
        }
        // The path was "/" or ended in "..": the folder reached is the last one.
        let last = folders[folders.count - 1]
        let shown = last.path.isEmpty ? "/" : last.path
        if privateFolder != nil, !isTrusted(last.status.st_uid, rootCounts: false) {
            throw PathProblem(path: shown, reason: .ownedByOther, owner: last.status.st_uid, mode: last.status.st_mode)
        }
        return Resolved(path: shown, status: last.status, anonymous: false)
    }

    /// The checks of the folder a path ends on, when one is made: this user's, and private or closed to writers.
    private static func checkLastFolder(
        _ parent: Int32, _ name: String, path: String, status: stat, _ privateFolder: Bool?
    ) throws(PathProblem) {
        guard let privateFolder else { return }
        guard isTrusted(status.st_uid, rootCounts: false) else {
            throw PathProblem(path: path, reason: .ownedByOther, owner: status.st_uid, mode: status.st_mode)
        }
        if privateFolder {
            // The parent passed the rule, so nobody else can have swapped the folder for a link since it was looked at.
            if status.st_mode & 0o077 != 0, fchmodat(parent, name, 0o700, 0) != 0 {
                throw PathProblem(path: path, failed: "chmod", errno: errno)
            }
        } else if status.st_mode & 0o022 != 0 {
            throw PathProblem(path: path, reason: .writableByOthers, owner: status.st_uid, mode: status.st_mode)
        }
    }

    private static func linkTarget(_ folder: Int32, _ name: String, path: String) throws(PathProblem) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlinkat(folder, name, &buffer, buffer.count - 1)
        guard count >= 0 else { throw PathProblem(path: path, failed: "readlink", errno: errno) }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A `/proc/PID/fd` link to an object without a name: `pipe:[123]`, `socket:[123]`, `anon_inode:[eventfd]`.
    private static func isAnonymousObject(_ target: String) -> Bool {
        !target.hasPrefix("/") && (target.contains(":[") || target.hasPrefix("anon_inode:"))
    }

    /// `path` made absolute against the current folder.
    static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        guard let current = getcwd(nil, 0) else { return "/" + path }
        defer { free(current) }
        return String(cString: current) + "/" + path
    }

    // MARK: - Who counts

    /// Whether `owner` is this user, or (`rootCounts`) root.
    package static func isTrusted(_ owner: uid_t, rootCounts: Bool) -> Bool {
        owner == geteuid() || (rootCounts && (owner == 0 || owner == unmappedRoot))
    }

    /// The overflow user, when this process's user namespace does not map root (see the type's description).
    private static let unmappedRoot: uid_t? = {
        guard let map = readSmallFile("/proc/self/uid_map") else { return nil }
        for line in map.split(separator: "\n") {
            let fields = line.split(separator: " ").compactMap { UInt64($0) }
            if fields.count == 3, fields[0] == 0, fields[2] > 0 { return nil }
        }
        let overflow = readSmallFile("/proc/sys/kernel/overflowuid").flatMap {
            uid_t($0.filter { !$0.isWhitespace })
        }
        return overflow ?? 65534
    }()

    private static func readSmallFile(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(descriptor, &buffer, buffer.count)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }
}

/// A path that fails ``SafePath``'s rule, or a call that failed on the way: what was found and the command that fixes
/// it.
package struct PathProblem: Error, Sendable, Hashable {
    /// What is wrong with ``path``.
    package enum Reason: Sendable, Hashable {
        /// It belongs to another user than this one (or root).
        case ownedByOther
        /// Group or other users can write it.
        case writableByOthers
        /// It belongs to another user and sits in the shared (sticky) folder given, where its owner can replace it.
        case replaceableInSharedFolder(String)
        /// A folder was wanted.
        case notAFolder
        /// A folder to make is a symbolic link.
        case symbolicLink
        /// The file opened is no longer the one the path names (it was replaced while being read).
        case replaced
        /// A system call failed.
        case failed(call: String, errno: Int32)
    }

    /// The file or folder concerned (symbolic links resolved up to it).
    package let path: String
    /// What is wrong.
    package let reason: Reason
    /// Its owner's user ID.
    package let owner: uid_t
    /// Its mode (type and permission bits).
    package let mode: mode_t

    /// True for a failed call; false when the path breaks the rule.
    package var isSystemFailure: Bool {
        if case .failed = reason { return true }
        return false
    }

    /// The `errno` of a failed call; nil when the path breaks the rule.
    package var errno: Int32? {
        if case .failed(_, let code) = reason { return code }
        return nil
    }

    /// What was found, and the command that fixes it: "other users can write /tmp/x (mode 0777, owner root (uid 0));
    /// run `chmod go-w /tmp/x`". `display` makes each path safe for a terminal (`DisplayText.path`, a layer above).
    package func message(showingPaths display: (String) -> String) -> String {
        // An empty path (never given by SafePath itself) is named in words, and its commands take a placeholder.
        let shown = path.isEmpty ? "the file" : display(path)
        let word = path.isEmpty ? "FILE" : display(Self.shellWord(path))
        let found = "mode \(Self.octal(mode)), owner \(display(Self.userName(owner)))"
        let me = display(Self.shellWord(Self.userName(geteuid(), withID: false)))
        let isLink = mode & S_IFMT == S_IFLNK
        switch reason {
        case .ownedByOther:
            return "\(shown) belongs to another user (\(found)), who can change it; run "
                + "`sudo chown \(isLink ? "-h " : "")\(me) \(word)`, or use a copy in a folder of your own"
        case .writableByOthers:
            return "other users can write \(shown) (\(found)); run `chmod go-w \(word)`"
                + (owner == geteuid() ? "" : " as its owner, or use a copy in a folder of your own")
        case .replaceableInSharedFolder(let folder):
            return "\(shown) belongs to another user (\(found)) and sits in the shared folder "
                + (folder.isEmpty ? "it is in, " : "\(display(folder)), ")
                + "where that user can replace it; run `sudo chown \(isLink ? "-h " : "")\(me) \(word)`, or use a copy "
                + "in a folder of your own"
        case .notAFolder:
            return "\(shown) is not a folder (\(found)); remove it"
        case .symbolicLink:
            return "\(shown) is a symbolic link (owner \(display(Self.userName(owner)))), not a folder; remove it"
        case .replaced:
            return "\(shown) was replaced while it was being read; try again"
        case .failed(let call, let code):
            return "\(shown): " + MessagePart.given("", call, " ") + "failed: \(String(cString: strerror(code)))"
        }
    }

    /// `mode`'s permission bits (with set-ID and sticky bits) in octal, four digits: `0777`, `1777`.
    static func octal(_ mode: mode_t) -> String {
        let digits = String(mode & 0o7777, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// "alice (uid 1000)", or "uid 1234" for a user without a name.
    static func userName(_ uid: uid_t, withID: Bool = true) -> String {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(uid, &entry, &buffer, buffer.count, &result) == 0, result != nil, let name = entry.pw_name
        else { return withID ? "uid \(uid)" : "\(uid)" }
        let text = String(cString: name)
        return withID ? "\(text) (uid \(uid))" : text
    }

    /// `word` in single quotes when a shell would split or expand it.
    static func shellWord(_ word: String) -> String {
        if !word.isEmpty, word.allSatisfy({ $0.isLetter || $0.isNumber || "/._-%=:,+@".contains($0) }) { return word }
        return "'" + word.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }
}

extension PathProblem {
    /// A failed system call on `path`.
    init(path: String, failed call: String, errno: Int32) {
        self.init(path: path, reason: .failed(call: call, errno: errno), owner: 0, mode: 0)
    }
}
