import Foundation
/// Quotes words for a command line the user can paste into a POSIX shell.
enum ShellWord {
    /// `word` as is when it holds only safe characters, else in single quotes.
    static func quote(_ word: String) -> String {
        let safe = word.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "-_./:=@%+,".unicodeScalars.contains(scalar))
        }
        if safe && !word.isEmpty { return word }
        return "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// The words quoted and joined by spaces.
    static func command(_ words: [String]) -> String {
        words.map(quote).joined(separator: " ")
    }
}
