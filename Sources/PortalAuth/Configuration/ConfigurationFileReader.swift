import Foundation
import Glibc
import PortalAuthCore

/// Reads a configuration file with a size limit, turning each way it can fail into its own error.
///
/// A configuration file decides where tokens go (`hosts_behind_proxy`, the logout URL), so one that another user (not
/// root) owns or can write, or that is reached through a folder another user can write, is refused
/// (`ConfigurationError.Kind.untrustedFile`; the rule is `SafePath`'s, OpenSSH's `StrictModes`).
enum ConfigurationFileReader {
    /// Reads `file` on a thread outside the cooperative pool (a FIFO or a slow disk may block).
    static func read(_ file: URL, limit: Int = ConfigurationError.maximumFileSize) async throws(ConfigurationError)
        -> Data
    {
        let result: Result<Data, ConfigurationError>
        do {
            result = try await BlockingWork.run(name: "PortalAuth.configuration-read") {
                Result { () throws(ConfigurationError) in try readBlocking(file, limit: limit) }
            }
        } catch {
            // the only error run adds
            throw .unreadable(file, reason: "the task was cancelled before the file was read")
        }
        return try result.get()
    }

    /// Reads at most `limit` bytes of `file`; more is an error.
    static func readBlocking(_ file: URL, limit: Int) throws(ConfigurationError) -> Data {
        let descriptor: Int32
        do {
            descriptor = try syscall("open") { open(file.path, O_RDONLY | O_CLOEXEC) }
        } catch {
            throw failure(file, error)
        }
        defer { close(descriptor) }

        var info = stat()
        do {
            try syscall("fstat") { fstat(descriptor, &info) }
        } catch {
            throw failure(file, error)
        }
        if (info.st_mode & S_IFMT) == S_IFDIR { throw .isDirectory(file) }
        try checkTrusted(file, opened: descriptor)
        if (info.st_mode & S_IFMT) == S_IFREG, Int(info.st_size) > limit {
            throw .tooLarge(file, size: Int(info.st_size))
        }

        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while data.count <= limit {
            let count: Int
            do {
                count = try syscall("read") {
                    buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
                }
            } catch {
                throw failure(file, error)
            }
            if count == 0 { break }
            data.append(contentsOf: buffer[0..<count])
        }
        if data.count > limit { throw .tooLarge(file, size: data.count) }
        return data
    }

    /// Refuses the file open at `descriptor` when another user could have written or placed it (`SafePath`).
    static func checkTrusted(_ file: URL, opened descriptor: Int32) throws(ConfigurationError) {
        do {
            try SafePath.checkFile(file.path, opened: descriptor)
        } catch {
            if let code = error.errno { throw failure(file, SystemError(call: "open", errno: code)) }
            throw .untrusted(file, error)
        }
    }

    /// The refusal of `file` when it exists and another user could have written or placed it; nil when it is
    /// trusted, or cannot be opened (what then happens is said by whatever reads it).
    static func untrusted(_ file: URL) -> ConfigurationError? {
        // O_NONBLOCK: a FIFO with no writer must not hang a check that reads nothing.
        let descriptor = open(file.path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        do {
            try checkTrusted(file, opened: descriptor)
            return nil
        } catch {
            return error.kind == .untrustedFile ? error : nil
        }
    }

    /// The configuration error for a failed system call on `file`.
    static func failure(_ file: URL, _ error: SystemError) -> ConfigurationError {
        switch error.errno {
        case ENOENT, ENOTDIR: return .fileNotFound(file)
        case EISDIR: return .isDirectory(file)
        case EACCES, EPERM: return .unreadable(file, reason: "permission denied")
        default: return .unreadable(file, reason: String(cString: strerror(error.errno)))
        }
    }
}
