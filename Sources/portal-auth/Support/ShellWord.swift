import Foundation
import PortalAuth
/// Quotes words for a command line the user can paste into a POSIX shell.
enum ShellWord {
    /// `word` as is when it holds only safe characters, else in single quotes.
    static func quote(_ word: String) -> String {
        let safe = word.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII
                && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
                    || "-_./:=@%+,".unicodeScalars.contains(scalar))
        }
        if safe && !word.isEmpty { return word }
        if DisplayText.containsControlCharacters(word) { return ansiQuoted(word) }
        return "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// `word` in `$'…'` quotes (bash, zsh, ksh, POSIX.1-2024 sh) with every control character, backslash and quote
    /// escaped: a word with a line break or ESC (a hostile file name) is pasted as it is, and printed on one line
    /// with nothing a terminal obeys.
    static func ansiQuoted(_ word: String) -> String {
        var quoted = "$'"
        for scalar in word.unicodeScalars {
            switch scalar {
            case "\\": quoted += "\\\\"
            case "'": quoted += "\\'"
            case "\n": quoted += "\\n"
            case "\t": quoted += "\\t"
            case "\r": quoted += "\\r"
            default:
                if DisplayText.containsControlCharacters(String(scalar)) {
                    // UTF-8 bytes, so that C1 controls and invisible marks come back as they were.
                    for byte in String(scalar).utf8 {
                        quoted += "\\x" + (byte < 16 ? "0" : "") + String(byte, radix: 16)
                    }
                } else {
                    quoted.unicodeScalars.append(scalar)
                }
            }
        }
        return quoted + "'"
    }

    /// The words quoted and joined by spaces.
    static func command(_ words: [String]) -> String {
        words.map(quote).joined(separator: " ")
    }
}
