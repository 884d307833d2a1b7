import Foundation

/// The values interpolated into the texts that callers write for the makers whose whole text is theirs
/// (`SchemeRedirectError(.kind, "…")`, `InputError.usage("…")`, `ValidationError("…")`), read from the source text, so
/// that `EmptyValueMessageTests` can require each to be one that cannot be empty (`CallerTextRules`).
///
/// A call site is a call of one of `makers`; its text is its last argument, split at the `+` outside brackets and
/// string literals. Of each part that is a string literal, every `\(…)` is an interpolation; a part that is not a
/// literal (`message`, `MessagePart.given(": ", reason)`) is one as a whole.
extension MessageSourceScan {
    struct Interpolation: CustomStringConvertible {
        var file: String
        var line: Int
        var expression: String
        /// The string literal it stands in (the expression itself for a part that is not a literal).
        var literal: String
        var description: String { "\(file):\(line): \\(\(expression))" }
    }

    /// The calls whose last argument is a message text: the caller-text makers of `EmptyValueMessageTests` (also
    /// called as `throw .usage(…)`), ArgumentParser's `ValidationError` and the agent socket's `AgentSocketError`.
    static let callerTextCall =
        #"\b(SystemLibraryError|TerminalInputError|SchemeRedirectError|AgentFailure(\.badRequest)?|UsageProblem|InputError(\.usage|\.unreadable)?|ExecFailure|ValidationError|AgentSocketError)\(|\bDiscoveryError\(text:|\b(throw|return|failure\() *\.(usage|unreadable|badRequest)\("#

    /// Every interpolation of every caller's text in `targets`.
    static func callerTextInterpolations() throws -> [Interpolation] {
        var found: [Interpolation] = []
        let pattern = try NSRegularExpression(pattern: callerTextCall)
        for target in targets {
            let folder = sources.appending(path: target)
            guard let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil) else {
                continue
            }
            for case let url as URL in walker where url.pathExtension == "swift" {
                let text = try String(contentsOf: url, encoding: .utf8)
                let file = target + url.path.dropFirst(folder.path.count)
                let characters = Array(text)
                let utf16 = text as NSString
                for match in pattern.matches(in: text, range: NSRange(location: 0, length: utf16.length)) {
                    let before = utf16.substring(to: match.range.location)
                    let lineStart = before.lastIndex(of: "\n").map { before.index(after: $0) } ?? before.startIndex
                    if before[lineStart...].trimmingCharacters(in: .whitespaces).hasPrefix("//") { continue }
                    let line = before.filter { $0 == "\n" }.count + 1
                    let open = before.count + utf16.substring(with: match.range).count
                    guard let close = closing(characters, from: open) else { continue }
                    let arguments = String(characters[open..<close])
                    guard var text = split(arguments, at: ",").last?.trimmingCharacters(in: .whitespacesAndNewlines)
                    else { continue }
                    if let label = text.range(of: #"^\w+:\s*"#, options: .regularExpression) {
                        text.removeSubrange(label)
                    }
                    for part in split(text, at: "+") {
                        let part = part.trimmingCharacters(in: .whitespacesAndNewlines)
                        let values = part.hasPrefix("\"") ? interpolations(in: Array(part)) : [part]
                        found += values.map {
                            Interpolation(file: file, line: line, expression: $0, literal: part)
                        }
                    }
                }
            }
        }
        return found
    }

    /// The index of the `)` that closes the bracket opened before `start`, string literals skipped.
    static func closing(_ text: [Character], from start: Int) -> Int? {
        walk(text, from: start, depth: 1) { _, depth in depth == 0 }
    }

    /// Walks `text` from `start`, string literals skipped, calling `visit` with the index of each other character and
    /// the bracket depth after it; returns the index where `visit` returns true, or nil at the end.
    static func walk(_ text: [Character], from start: Int, depth: Int, _ visit: (Int, Int) -> Bool) -> Int? {
        var depth = depth
        var index = start
        while index < text.count {
            let character = text[index]
            if character == "\"" {
                index = endOfLiteral(text, at: index)
                continue
            }
            if "([{".contains(character) { depth += 1 }
            if ")]}".contains(character) { depth -= 1 }
            if visit(index, depth) { return index }
            index += 1
        }
        return nil
    }

    /// The index after the string literal that starts at `start` (`"…"` or `"""…"""`), its interpolations skipped.
    static func endOfLiteral(_ text: [Character], at start: Int) -> Int {
        let isMultiline = text[start...].starts(with: "\"\"\"")
        var index = start + (isMultiline ? 3 : 1)
        while index < text.count {
            if text[index] == "\\" {
                if index + 1 < text.count, text[index + 1] == "(" {
                    index = (closing(text, from: index + 2) ?? text.count) + 1
                } else {
                    index += 2
                }
                continue
            }
            if isMultiline ? text[index...].starts(with: "\"\"\"") : text[index] == "\"" {
                return index + (isMultiline ? 3 : 1)
            }
            index += 1
        }
        return text.count
    }

    /// The `\(…)` expressions of the string literal `literal` (outer ones only).
    static func interpolations(in literal: [Character]) -> [String] {
        var found: [String] = []
        var index = 1
        while index < literal.count {
            if literal[index] == "\\" {
                if index + 1 < literal.count, literal[index + 1] == "(" {
                    let close = closing(literal, from: index + 2) ?? literal.count
                    found.append(String(literal[(index + 2)..<close]).trimmingCharacters(in: .whitespacesAndNewlines))
                    index = close + 1
                } else {
                    index += 2
                }
                continue
            }
            index += 1
        }
        return found
    }

    /// `text` split at `separator` where it stands outside brackets and string literals.
    static func split(_ text: String, at separator: Character) -> [String] {
        let characters = Array(text)
        var parts: [String] = []
        var start = 0
        _ = walk(characters, from: 0, depth: 0) { index, depth in
            if characters[index] == separator, depth == 0 {
                parts.append(String(characters[start..<index]))
                start = index + 1
            }
            return false
        }
        parts.append(String(characters[start...]))
        return parts
    }
}
