/// Text from outside (a server's answer, a redirect's parameters, a configuration file, a stored file) made safe to
/// show on a terminal or in one line of a message.
///
/// A terminal obeys control characters: ESC starts sequences that can move the cursor, rewrite the screen, set the
/// window title or the clipboard; BEL rings; CR and LF let a server forge lines that look like the tool's own. Every
/// place that shows such text passes it through ``neutralised(_:limit:)`` first.
package enum DisplayText {
    /// `text` on one line with nothing a terminal obeys: line breaks, tabs and other whitespace controls become one
    /// space (runs folded, ends trimmed); other C0 and C1 controls, DEL and the invisible direction and width
    /// marks (U+200B–U+200F, U+202A–U+202E, U+2066–U+2069, U+061C, U+FEFF) become a visible escape such as `\u{1B}`.
    /// Longer than `limit` characters (escapes counted as shown): cut, with "…" added.
    package static func neutralised(_ text: String, limit: Int? = nil) -> String {
        var scalars = String.UnicodeScalarView()
        var pendingSpace = false
        var count = 0
        let limit = limit ?? .max
        for scalar in text.unicodeScalars {
            if isFoldedSpace(scalar) {
                pendingSpace = !scalars.isEmpty
                continue
            }
            if pendingSpace {
                scalars.append(" ")
                count += 1
                pendingSpace = false
            }
            let shown =
                isHidden(scalar)
                ? Array("\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars) : [scalar]
            if count + shown.count > limit {
                scalars.append("…")
                return String(scalars)
            }
            scalars.append(contentsOf: shown)
            count += shown.count
        }
        return String(scalars)
    }

    /// A file name or path as shown in a message: every character a terminal obeys or that breaks the line (ESC, BEL,
    /// CR, LF, tab, the other C0 and C1 controls, DEL, the invisible marks of ``neutralised(_:limit:)``) becomes a
    /// visible escape such as `\u{A}`, so a hostile file name can neither drive the terminal nor forge a line of the
    /// tool's own; plain spaces stay.
    package static func path(_ path: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in path.unicodeScalars {
            if isHidden(scalar) || (isFoldedSpace(scalar) && scalar != " ") {
                scalars.append(contentsOf: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars)
            } else {
                scalars.append(scalar)
            }
        }
        return String(scalars)
    }

    /// Whether `text` holds a character ``neutralised(_:limit:)`` would change (whitespace apart from the plain
    /// space included): such text is refused where it must stay as it is, such as a token or a user name.
    package static func containsControlCharacters(_ text: String) -> Bool {
        text.unicodeScalars.contains { isHidden($0) || (isFoldedSpace($0) && $0 != " ") }
    }

    // MARK: - Classes of characters

    /// Line breaks and other whitespace shown as one space.
    private static func isFoldedSpace(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09...0x0D, 0x20, 0x85, 0x2028, 0x2029: return true
        default: return false
        }
    }

    /// Characters a terminal obeys or that hide what the text says: shown as an escape.
    private static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x08, 0x0E...0x1F, 0x7F, 0x80...0x84, 0x86...0x9F: return true
        case 0x061C, 0x200B...0x200F, 0x202A...0x202E, 0x2066...0x2069, 0xFEFF: return true
        default: return false
        }
    }
}
