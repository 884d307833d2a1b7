import Foundation
import Glibc

/// Writes to standard error, unbuffered, from any thread.
enum StandardError {
    /// Whether standard error is a terminal (status lines are drawn only then).
    static let isTerminal = isatty(2) == 1

    /// Writes `text` as it is.
    static func write(_ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { Glibc.write(2, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return }
            offset += written
        }
    }

    /// Writes `text` and a newline.
    static func line(_ text: String) {
        write(text + "\n")
    }
}
