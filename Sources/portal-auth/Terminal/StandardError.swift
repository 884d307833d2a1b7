import Foundation
import Glibc
import PortalAuthCore

/// Writes to standard error, unbuffered, from any thread.
enum StandardError {
    /// Whether standard error is a terminal (status lines are drawn only then).
    static let isTerminal = isatty(2) == 1

    /// The width lines are wrapped at: on a terminal, `COLUMNS` when set, else the terminal's own width; nil (no
    /// wrapping) when standard error is not a terminal, so logs and scripts get each message on one line.
    static let width: Int? = {
        guard isTerminal else { return nil }
        if let text = getenv("COLUMNS").map({ String(cString: $0) }), let columns = Int(text), columns >= 20 {
            return columns
        }
        var size = winsize()
        guard ioctl(2, UInt(TIOCGWINSZ), &size) == 0, size.ws_col >= 20 else { return nil }
        return Int(size.ws_col)
    }()

    /// Writes `text` as it is.
    static func write(_ text: String) {
        try? writeFully(2, Array(text.utf8))
    }

    /// Writes `text` and a newline, wrapped at the terminal's width (see ``wrap(_:width:)``).
    static func line(_ text: String) {
        write((width.map { wrap(text, width: $0) } ?? text) + "\n")
    }

    /// `text` with each of its lines broken at spaces so that none is longer than `width`; a word is never broken (a
    /// longer one, such as a URL, gets a line of its own), and an indented line (a command or an address to copy)
    /// is left whole.
    static func wrap(_ text: String, width: Int) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            guard line.count > width, line.first != " ", line.first != "\t" else { return String(line) }
            var lines: [String] = []
            var current = ""
            for word in line.split(separator: " ") {
                if current.isEmpty {
                    current = String(word)
                } else if current.count + 1 + word.count <= width {
                    current += " " + word
                } else {
                    lines.append(current)
                    current = String(word)
                }
            }
            if !current.isEmpty { lines.append(current) }
            return lines.joined(separator: "\n")
        }.joined(separator: "\n")
    }
}
