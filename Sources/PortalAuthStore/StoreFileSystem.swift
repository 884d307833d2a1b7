package import Foundation
import Glibc
import PortalAuthCore

/// The system calls the store makes, each checked on the spot and turned into a `CredentialStoreError`
/// that names the path.
///
/// Every descriptor is opened with `O_CLOEXEC` (a browser or helper the tool starts must not inherit it)
/// and, for files, `O_NOFOLLOW` (a store must be a regular file, not a link somebody planted).
package enum StoreFileSystem {
    // MARK: - Paths and status

    /// The process's current directory.
    static func currentDirectory() -> String { FileManager.default.currentDirectoryPath }

    /// The directory part of an absolute path ("/" for "/name").
    package static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// `stat` of `path` (`lstat` when `followingLinks` is false), or nil when nothing is there.
    package static func status(of path: String, followingLinks: Bool = true) throws(CredentialStoreError) -> stat? {
        var info = stat()
        do {
            try syscall("stat") { followingLinks ? stat(path, &info) : lstat(path, &info) }
        } catch {
            if error.errno == ENOENT || error.errno == ENOTDIR { return nil }
            throw .fileSystem("inspect", path, error)
        }
        return info
    }

    /// True when `info` describes a regular file.
    static func isRegularFile(_ info: stat) -> Bool { info.st_mode & S_IFMT == S_IFREG }

    // MARK: - Permission checks

    /// Refuses a store file (or its lock file) that is not a regular file, belongs to another user,
    /// or, when `privateMode` is set, has any group or other permission bit.
    static func checkPrivateFile(_ info: stat, path: String, privateMode: Bool = true) throws(CredentialStoreError) {
        guard isRegularFile(info) else { throw .notRegularFile(path) }
        let ownedByOther = info.st_uid != geteuid()
        if ownedByOther || (privateMode && info.st_mode & 0o077 != 0) {
            throw .unsafeFile(path, mode: info.st_mode, ownedByOther: ownedByOther)
        }
    }

    /// Checks the store's directory when it exists; returns false when it does not.
    ///
    /// Every folder on the way is checked too (`SafePath`): one another user owns or can write could swap the
    /// store's directory for theirs.
    @discardableResult
    static func checkDirectoryIfPresent(_ path: String) throws(CredentialStoreError) -> Bool {
        do {
            return try SafePath.checkFolder(path, private: false)
        } catch {
            throw directoryError(path, error)
        }
    }

    /// Creates `path` and any missing parents with mode 0700, then checks it.
    ///
    /// Only the directories created here get their mode set; an existing directory (the home directory, say)
    /// is never changed, and is refused by the check if it is not private. Every component is created and opened
    /// without following a link another user could have planted, its owner and mode checked (`SafePath`).
    package static func ensurePrivateDirectory(_ path: String) throws(CredentialStoreError) {
        do {
            try SafePath.makeFolder(path, mode: 0o700, private: false)
        } catch {
            throw directoryError(path, error)
        }
    }

    /// The store's error for a `SafePath` refusal on the way to the store's directory `path`.
    private static func directoryError(_ path: String, _ problem: PathProblem) -> CredentialStoreError {
        if let code = problem.errno {
            return .fileSystem("create the directory", problem.path, SystemError(call: "mkdir", errno: code))
        }
        guard problem.path == path else { return .unsafePath(path, problem) }
        switch problem.reason {
        case .notAFolder: return .notRegularFile(path)
        case .writableByOthers: return .unsafeDirectory(path, mode: problem.mode, ownedByOther: false)
        case .ownedByOther, .replaceableInSharedFolder:
            return .unsafeDirectory(path, mode: problem.mode, ownedByOther: true)
        default: return .unsafePath(path, problem)
        }
    }

    // MARK: - Descriptors

    /// Opens `path` with `flags | O_CLOEXEC | O_NOFOLLOW`; nil when it does not exist and `O_CREAT` is not given.
    package static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o600) throws(CredentialStoreError)
        -> Int32?
    {
        do {
            return try syscall("open") { Glibc.open(path, flags | O_CLOEXEC | O_NOFOLLOW, mode) }
        } catch {
            switch error.errno {
            case ENOENT where flags & O_CREAT == 0: return nil
            case ELOOP: throw .notRegularFile(path)
            default: throw .fileSystem("open", path, error)
            }
        }
    }

    /// `fstat` of an open descriptor.
    package static func status(ofDescriptor descriptor: Int32, path: String) throws(CredentialStoreError) -> stat {
        var info = stat()
        do {
            try syscall("fstat") { fstat(descriptor, &info) }
        } catch {
            throw .fileSystem("inspect", path, error)
        }
        return info
    }

    /// Reads an open file to its end.
    static func readAll(_ descriptor: Int32, path: String) throws(CredentialStoreError) -> Data {
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count: Int
            do {
                count = try syscall("read") {
                    chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
                }
            } catch {
                throw .fileSystem("read", path, error)
            }
            if count == 0 { return data }
            data.append(contentsOf: chunk[0..<count])
        }
    }

    /// Writes all of `data`, continuing after short writes.
    static func writeAll(_ descriptor: Int32, _ data: Data, path: String) throws(CredentialStoreError) {
        do { try writeFully(descriptor, data) } catch { throw .fileSystem("write", path, error) }
    }

    /// Flushes a directory's entries (after a rename) to disk.
    static func syncDirectory(_ path: String) throws(CredentialStoreError) {
        guard let descriptor = try open(path, O_RDONLY | O_DIRECTORY) else {
            throw .fileSystem("open", path, SystemError(call: "open", errno: ENOENT))
        }
        defer { close(descriptor) }
        do {
            try syscall("fsync") { fsync(descriptor) }
        } catch {
            throw .fileSystem("flush", path, error)
        }
    }

    /// Renames `source` to `destination`, replacing it atomically.
    static func rename(_ source: String, to destination: String) throws(CredentialStoreError) {
        do {
            try syscall("rename") { Glibc.rename(source, destination) }
        } catch {
            throw .fileSystem("replace", destination, error)
        }
    }
}
