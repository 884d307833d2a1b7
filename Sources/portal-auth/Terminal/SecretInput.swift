import Foundation
import Glibc
import PortalAuth

/// Reads passwords and secrets from where scripts give them — standard input, a file — never from the command line,
/// where other users can see them (`ps`, shell history).
///
/// Differs from `TerminalInput` (the library's, which the tool asks a person with): no terminal, no question.
enum SecretInput {
    /// The largest secret accepted, as on the terminal.
    static let limit = TerminalInput.limit

    // MARK: - Standard input

    /// The first line of standard input, without its line end (`--password-stdin`).
    static func firstLineOfStandardInput(naming what: String) throws -> String {
        let (bytes, _) = TerminalInput.readLine(keeping: limit + 1)
        guard !bytes.isEmpty else {
            throw InputError.usage(
                "no \(what) on standard input: pipe it in, e.g. `printf '%s\\n' \"$PASSWORD\" | portal-auth …`")
        }
        guard bytes.count <= limit else {
            throw InputError.usage("the \(what) on standard input is longer than \(limit) bytes")
        }
        return String(decoding: bytes, as: UTF8.self)
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
            throw InputError.unreadable(
                "cannot read the \(what) file" + MessagePart.given(" ", DisplayText.path(path)) + ": \(reason)")
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
}
