import Foundation
import Glibc

/// A tmpfs of a few hundred kilobytes mounted on a new temporary directory (root only), to run out of space.
final class SmallFileSystem {
    /// A mount or fill step that failed.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The mount point.
    let path: String
    private let temporary: TemporaryDirectory
    private var mounted = false

    init(kilobytes: Int) throws {
        temporary = try TemporaryDirectory()
        path = temporary.path + "/small"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        let status = Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(kilobytes)k,mode=0700", "tmpfs", path])
        guard status == 0 else { throw Failure(description: "mount -t tmpfs on \(path) failed with status \(status)") }
        mounted = true
    }

    deinit { unmount() }

    /// Writes a file until the file system is full; returns its path.
    func fill() throws -> String {
        let filler = "\(path)/filler"
        let descriptor = open(filler, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard descriptor >= 0 else { throw Failure(description: "cannot create \(filler)") }
        defer { close(descriptor) }
        let chunk = [UInt8](repeating: 0, count: 4096)
        while chunk.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) > 0 {}
        // Single bytes for a last partial page, if any.
        while chunk.withUnsafeBytes({ write(descriptor, $0.baseAddress, 1) }) > 0 {}
        return filler
    }

    /// Unmounts (lazily, so open descriptors cannot keep it busy); the temporary directory goes with this object.
    func unmount() {
        guard mounted else { return }
        mounted = false
        _ = Self.run("/bin/umount", ["-l", path])
    }

    private static func run(_ tool: String, _ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        do { try process.run() } catch { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
