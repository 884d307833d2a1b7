import Foundation
import Glibc
import PortalAuth
import Synchronization

/// Reads passwords and secrets from where scripts and people give them — standard input, a file, a prompt on
/// the terminal with echo off — never from the command line, where other users can see them (`ps`, shell history).
enum SecretInput {
    /// The largest secret accepted.
    static let limit = 64 * 1024

    // MARK: - Standard input

    /// The first line of standard input, without its line end (`--password-stdin`).
    static func firstLineOfStandardInput(naming what: String) throws -> String {
        let (bytes, _) = readLineFromStandardInput(keeping: limit + 1)
        guard !bytes.isEmpty else {
            throw InputError.usage(
                "no \(what) on standard input: pipe it in, e.g. `printf '%s\\n' \"$PASSWORD\" | portal-auth …`")
        }
        guard bytes.count <= limit else {
            throw InputError.usage("the \(what) on standard input is longer than \(limit) bytes")
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The bytes of standard input up to a line end or its end, without the line end (and a `\r` before it);
    /// reading stops after `keeping` bytes. `ended` is false when input ended before a line end.
    private static func readLineFromStandardInput(keeping: Int) -> (bytes: [UInt8], ended: Bool) {
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

    // MARK: - Files

    /// The content of `path` without surrounding white space (a trailing newline); `-` reads standard input.
    /// Warns on standard error when other users can read the file.
    static func contentOfFile(_ path: String, naming what: String) throws -> String {
        if path == "-" { return try firstLineOfStandardInput(naming: what) }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            let reason =
                FileManager.default.fileExists(atPath: path) ? "it cannot be read (permissions?)" : "no such file"
            throw InputError.unreadable("cannot read the \(what) file \(DisplayText.path(path)): \(reason)")
        }
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & 0o077 != 0 {
            StandardError.line(
                "portal-auth: warning: \(DisplayText.path(path)) can be read by other users (mode \(String(info.st_mode & 0o777, radix: 8))); run chmod 600 \(path)"
            )
        }
        let text = String(decoding: data.prefix(limit + 1), as: UTF8.self).trimmingCharacters(
            in: .whitespacesAndNewlines)
        guard !text.isEmpty else { throw InputError.unreadable("the \(what) file \(DisplayText.path(path)) is empty") }
        guard data.count <= limit else {
            throw InputError.unreadable("the \(what) file \(DisplayText.path(path)) is larger than \(limit) bytes")
        }
        return text
    }

    // MARK: - Terminal

    /// Whether a person can be asked: standard input and standard error are both a terminal.
    static var canPrompt: Bool { isatty(0) == 1 && isatty(2) == 1 }

    /// Asks on the terminal with echo off, on a thread of its own (the read blocks).
    ///
    /// The terminal is in non-canonical mode without signals while reading, so Ctrl-C and Ctrl-D on an empty
    /// line cancel the prompt and the terminal is always restored; Backspace and Ctrl-U edit the line.
    static func prompt(_ text: String) async throws -> String {
        try await BlockingWork.run(name: "portal-auth-prompt", dedicatedThread: true) { try promptBlocking(text) }
    }

    /// Asks for a password with echo off until one is typed: an empty answer (Enter alone) is never sent, it is
    /// explained and asked again; Ctrl-C or Ctrl-D stops.
    static func password(_ text: String) async throws -> String {
        while true {
            let password = try await prompt(text)
            if !password.isEmpty { return password }
            StandardError.line("The password is empty; type it (nothing is shown), or press Ctrl-C to stop.")
        }
    }

    /// Asks on the terminal for a line that is not secret (a user name, a file path), echoed as typed; the
    /// terminal's own line editing applies. Ctrl-D cancels; so does Ctrl-C (the task is cancelled, and the wait
    /// for a whole line is given up within a fifth of a second).
    static func line(_ text: String) async throws -> String {
        let cancelled = Mutex(false)
        return try await withTaskCancellationHandler {
            try await BlockingWork.run(name: "portal-auth-prompt", dedicatedThread: true) {
                StandardError.write(text)
                // In canonical mode the terminal turns readable once a whole line is typed.
                var descriptor = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
                while true {
                    if cancelled.withLock({ $0 }) { throw InputError.cancelled }
                    let ready = poll(&descriptor, 1, 200)
                    // a line, end of input, or an error read reports
                    if ready > 0 || (ready < 0 && errno != EINTR) { break }
                }
                let (bytes, ended) = readLineFromStandardInput(keeping: limit + 1)
                guard ended || !bytes.isEmpty else { throw InputError.cancelled }
                guard bytes.count <= limit else { throw InputError.usage("the answer is longer than \(limit) bytes") }
                return String(decoding: bytes, as: UTF8.self)
            }
        } onCancel: {
            cancelled.withLock { $0 = true }
        }
    }

    private static func promptBlocking(_ text: String) throws -> String {
        var saved = termios()
        guard tcgetattr(0, &saved) == 0 else { throw InputError.usage("standard input is not a terminal to ask on") }
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG)
        withUnsafeMutableBytes(of: &quiet.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        // Echo off before the prompt shows: anything typed ahead is discarded (TCSAFLUSH) and nothing typed after
        // the prompt appears is ever echoed.
        guard tcsetattr(0, TCSAFLUSH, &quiet) == 0 else {
            throw InputError.usage("cannot switch the terminal's echo off")
        }
        StandardError.write(text)
        defer {
            tcsetattr(0, TCSAFLUSH, &saved)
            StandardError.write("\n")
        }
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = read(0, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            guard count == 1 else { throw InputError.cancelled }
            switch byte {
            case 0x0A, 0x0D: return String(decoding: bytes, as: UTF8.self)  // Enter
            case 0x03: throw InputError.cancelled  // Ctrl-C
            case 0x04 where bytes.isEmpty: throw InputError.cancelled  // Ctrl-D on an empty line
            case 0x7F, 0x08: while let last = bytes.popLast(), last & 0xC0 == 0x80 {}  // Backspace: one whole character
            case 0x15: bytes.removeAll()  // Ctrl-U
            default: if bytes.count < limit { bytes.append(byte) }
            }
        }
    }
}
