import Foundation
import Glibc
import Synchronization

/// Questions on the terminal for the library's own prompt (`TerminalAuthenticatorPrompt`): written on standard
/// error, answered on standard input, secrets with echo off. Blocking reads run through `BlockingWork`.
package enum TerminalInput {
    /// The longest answer accepted.
    package static let limit = 64 * 1024

    /// Whether a person can be asked: standard input and standard error are both a terminal.
    package static var isAvailable: Bool { isatty(0) == 1 && isatty(2) == 1 }

    /// Writes `text` and a newline on standard error.
    package static func say(_ text: String) {
        write(text + "\n")
    }

    /// Asks for a line that is not secret (a user name, a file path), echoed as typed.
    ///
    /// - Throws: `CancellationError` at the end of input (Ctrl-D) or when the task is cancelled (the wait is given
    ///   up within a fifth of a second).
    package static func line(_ prompt: String) async throws -> String {
        let cancelled = Mutex(false)
        return try await withTaskCancellationHandler {
            try await BlockingWork.run(name: "PortalAuth.prompt") {
                write(prompt)
                var descriptor = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
                while true {
                    if cancelled.withLock({ $0 }) { throw CancellationError() }
                    let ready = poll(&descriptor, 1, 200)
                    if ready > 0 || (ready < 0 && errno != EINTR) { break }
                }
                var bytes: [UInt8] = []
                var byte: UInt8 = 0
                var ended = false
                while bytes.count <= limit {
                    let count = read(0, &byte, 1)
                    if count < 0 && errno == EINTR { continue }
                    if count <= 0 { break }
                    if byte == UInt8(ascii: "\n") {
                        ended = true
                        break
                    }
                    bytes.append(byte)
                }
                guard ended || !bytes.isEmpty else { throw CancellationError() }
                if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
                return String(decoding: bytes, as: UTF8.self)
            }
        } onCancel: {
            cancelled.withLock { $0 = true }
        }
    }

    /// Asks for a secret with echo off; the terminal is restored whatever happens.
    ///
    /// - Throws: `CancellationError` for Ctrl-C, or Ctrl-D on an empty line.
    package static func secret(_ prompt: String) async throws -> String {
        try await BlockingWork.run(name: "PortalAuth.prompt") {
            var saved = termios()
            guard tcgetattr(0, &saved) == 0 else { throw CancellationError() }
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG)
            withUnsafeMutableBytes(of: &quiet.c_cc) { cc in
                cc[Int(VMIN)] = 1
                cc[Int(VTIME)] = 0
            }
            guard tcsetattr(0, TCSAFLUSH, &quiet) == 0 else { throw CancellationError() }
            write(prompt)
            defer {
                tcsetattr(0, TCSAFLUSH, &saved)
                write("\n")
            }
            var bytes: [UInt8] = []
            var byte: UInt8 = 0
            while true {
                let count = read(0, &byte, 1)
                if count < 0 && errno == EINTR { continue }
                guard count == 1 else { throw CancellationError() }
                switch byte {
                case 0x0A, 0x0D: return String(decoding: bytes, as: UTF8.self)
                case 0x03: throw CancellationError()
                case 0x04 where bytes.isEmpty: throw CancellationError()
                case 0x7F, 0x08: while let last = bytes.popLast(), last & 0xC0 == 0x80 {}
                case 0x15: bytes.removeAll()
                default: if bytes.count < limit { bytes.append(byte) }
                }
            }
        }
    }

    private static func write(_ text: String) {
        try? writeFully(2, Array(text.utf8))
    }
}
