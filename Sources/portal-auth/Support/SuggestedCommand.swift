import PortalAuth

/// An error that names the command to run next (a sign-in, the same command with `--interactive`): under
/// `--format json` it is also given as its own field, so that a script need not cut it out of the message.
protocol SuggestingCommand {
    /// The command to run, ready to paste (`ShellWord` quoting); nil when none can be told.
    var suggestedCommand: String? { get }
    /// Another command that would also do (this command again with `--interactive`), or nil.
    var alternativeCommand: String? { get }
}

extension SignInNeeded: SuggestingCommand {
    var suggestedCommand: String? { command }
    var alternativeCommand: String? { interactiveCommand }
}

/// A suggested command as `--format json` errors carry it: `{"argv": [...], "shell": "..."}`.
enum SuggestedCommand {
    /// The object for `shell`, a command line written by `ShellWord.command` (a placeholder such as `FILE` stays a
    /// word of its own); null when there is none.
    static func json(_ shell: String?) -> JSONValue {
        guard let shell, let argv = words(shell) else { return .null }
        return .object(["argv": .array(argv.map(JSONValue.string)), "shell": .string(shell)])
    }

    /// The words of a command line quoted as `ShellWord` quotes them: bare words, '…' (with '\'' for a quote) and
    /// $'…' (with \\, \', \n, \t, \r and \xHH escapes); nil for anything else (an unbalanced quote).
    static func words(_ line: String) -> [String]? {
        var words: [String] = []
        var current: [UInt8] = []
        var inWord = false
        let bytes = Array(line.utf8)
        var index = 0
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: " ") {
                if inWord { words.append(String(decoding: current, as: UTF8.self)) }
                current = []
                inWord = false
                index += 1
            } else if byte == UInt8(ascii: "'") {
                inWord = true
                guard let close = bytes[(index + 1)...].firstIndex(of: UInt8(ascii: "'")) else { return nil }
                current += bytes[(index + 1)..<close]
                index = close + 1
                // '\'' : an escaped quote between two quoted parts (the loop then reads the next part's opening quote).
                if bytes[index...].starts(with: Array("\\'".utf8)) {
                    current.append(UInt8(ascii: "'"))
                    index += 2
                }
            } else if byte == UInt8(ascii: "$"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "'") {
                inWord = true
                index += 2
                var closed = false
                while index < bytes.count {
                    let next = bytes[index]
                    if next == UInt8(ascii: "'") { closed = true; index += 1; break }
                    if next == UInt8(ascii: "\\"), index + 1 < bytes.count {
                        let escaped = bytes[index + 1]
                        index += 2
                        switch escaped {
                        case UInt8(ascii: "n"): current.append(0x0A)
                        case UInt8(ascii: "t"): current.append(0x09)
                        case UInt8(ascii: "r"): current.append(0x0D)
                        case UInt8(ascii: "x"):
                            guard index + 1 < bytes.count, let high = hex(bytes[index]), let low = hex(bytes[index + 1])
                            else { return nil }
                            current.append(high << 4 | low)
                            index += 2
                        default: current.append(escaped)
                        }
                    } else {
                        current.append(next)
                        index += 1
                    }
                }
                guard closed else { return nil }
            } else {
                inWord = true
                current.append(byte)
                index += 1
            }
        }
        if inWord { words.append(String(decoding: current, as: UTF8.self)) }
        return words
    }
}
