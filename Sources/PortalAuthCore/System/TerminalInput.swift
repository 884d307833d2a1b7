import Foundation
import Glibc
import Synchronization

/// Questions on the terminal, the library's (`TerminalAuthenticatorPrompt`) and the tool's: written on standard
/// error, answered on standard input, secrets with echo off. Each wait runs on a thread of its own
/// (`BlockingWork`, dedicated: a person takes as long as they take, and must not hold the pool's threads).
package enum TerminalInput {
    /// The longest answer accepted.
    package static let limit = 64 * 1024

    /// Whether a person can be asked: standard input and standard error are both a terminal.
    package static var isAvailable: Bool { isatty(0) == 1 && isatty(2) == 1 }

    /// Writes `text` and a newline on standard error.
    package static func say(_ text: String) {
        write(text + "\n")
    }

    /// Asks for a line that is not secret (a user name, a file path), echoed as typed; the terminal's own line
    /// editing applies.
    ///
    /// - Throws: `CancellationError` at the end of input (Ctrl-D) or when the task is cancelled (Ctrl-C in the tool:
    ///   the wait for a whole line is given up within a fifth of a second); `TerminalInputError` for an answer
    ///   longer than ``limit``.
    package static func line(_ prompt: String) async throws -> String {
        let cancelled = Mutex(false)
        return try await withTaskCancellationHandler {
            try await BlockingWork.run(name: "PortalAuth.prompt", dedicatedThread: true) {
                write(prompt)
                // In canonical mode the terminal turns readable once a whole line is typed.
                var descriptor = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
                while true {
                    if cancelled.withLock({ $0 }) { throw CancellationError() }
                    let ready = poll(&descriptor, 1, 200)
                    // a line, end of input, or an error the read reports
                    if ready > 0 || (ready < 0 && errno != EINTR) { break }
                }
                let (bytes, ended) = readLine(keeping: limit + 1)
                guard ended || !bytes.isEmpty else { throw CancellationError() }
                guard bytes.count <= limit else {
                    throw TerminalInputError(description: "the answer is longer than \(limit) bytes")
                }
                return String(decoding: bytes, as: UTF8.self)
            }
        } onCancel: {
            cancelled.withLock { $0 = true }
        }
    }

    /// Asks for a secret with echo off.
    ///
    /// The terminal is in non-canonical mode without signals while reading, so Ctrl-C and Ctrl-D on an empty line
    /// cancel the question and the terminal is always restored; Backspace and Ctrl-U edit the line.
    ///
    /// - Throws: `CancellationError` for Ctrl-C, or Ctrl-D on an empty line; `TerminalInputError` when standard
    ///   input is no terminal or its echo cannot be switched off.
    package static func secret(_ prompt: String) async throws -> String {
        try await BlockingWork.run(name: "PortalAuth.prompt", dedicatedThread: true) { try readSecret(prompt) }
    }

    /// Asks for a password with echo off until one is typed: an empty answer (Enter alone) is never sent, it is
    /// explained and asked again. Throws as ``secret(_:)``.
    package static func password(_ prompt: String) async throws -> String {
        while true {
            let password = try await secret(prompt)
            if !password.isEmpty { return password }
            say("The password is empty; type it (nothing is shown), or press Ctrl-C to stop.")
        }
    }

    /// The bytes of standard input up to a line end or its end, without the line end (and a `\r` before it);
    /// reading stops after `keeping` bytes. `ended` is false when input ended before a line end.
    package static func readLine(keeping: Int) -> (bytes: [UInt8], ended: Bool) {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        var ended = false
        while true {
            let count = read(0, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            if byte == UInt8(ascii: "\n") {
                ended = true
                break
            }
            bytes.append(byte)
            if bytes.count >= keeping { break }
        }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        return (bytes, ended)
    }

    private static func readSecret(_ prompt: String) throws -> String {
        var saved = termios()
        guard tcgetattr(0, &saved) == 0 else {
            throw TerminalInputError(description: "standard input is not a terminal to ask on")
        }
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG)
        withUnsafeMutableBytes(of: &quiet.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        // Echo off before the prompt shows: anything typed ahead is discarded (TCSAFLUSH) and nothing typed after
        // the prompt appears is ever echoed.
        guard tcsetattr(0, TCSAFLUSH, &quiet) == 0 else {
            throw TerminalInputError(description: "cannot switch the terminal's echo off")
        }
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
            case 0x0A, 0x0D: return String(decoding: bytes, as: UTF8.self)  // Enter
            case 0x03: throw CancellationError()  // Ctrl-C
            case 0x04 where bytes.isEmpty: throw CancellationError()  // Ctrl-D on an empty line
            case 0x7F, 0x08: while let last = bytes.popLast(), last & 0xC0 == 0x80 {}  // Backspace: one whole character
            case 0x15: bytes.removeAll()  // Ctrl-U
            default: if bytes.count < limit { bytes.append(byte) }
            }
        }
    }

    private static func write(_ text: String) {
        try? writeFully(2, Array(text.utf8))
    }
}

/// A question that cannot be asked on this terminal (no terminal, echo that cannot be switched off), or an answer
/// too long: what a person must change before asking again.
package struct TerminalInputError: CategorizedError, CustomStringConvertible, Sendable {
    /// What went wrong, in words for a person; never the answer.
    package let description: String

    /// Nothing to read, or no way to ask: the caller's input or setting is at fault.
    package var category: ErrorCategory { .usage }
}
