import Foundation

/// The message types of the sources and what makes and distinguishes their messages, read from the source text, so
/// that `EmptyValueMessageTests` can tell when a message type, a way to make one or one of its cases is not rendered.
///
/// A message type is a type that conforms to `Error` or `CategorizedError` and to `CustomStringConvertible`, or one of
/// `extraTypes` (whose text is made by a method of its own). Of each it lists:
/// - its makers: every `static func` or `static let`/`var` of its own type, every `init` that is not private (by
///   selector: `corrupted(_:syntax:)`, `init(_:file:detail:)`), and `init(memberwise)` for a struct without an
///   `init` in its body;
/// - its cases: those of the enums declared in it (`Code`, `Kind`, `Reason`), or, for a type without one, the values
///   of its `Kind` struct (`static let name = Kind(…)`): what its message switches over. The test finds which case a
///   rendered value is with `Mirror`.
///
/// Makers whose whole text is their caller's (`UsageProblem(description:)`) are listed too; the values their callers
/// interpolate into those texts are read by `callerTextInterpolations()` and checked against `CallerTextRules`.
struct MessageSourceScan {
    struct MessageType {
        var name: String
        var file: String
        var makers: Set<String> = []
        var cases: Set<String> = []
    }

    /// Message types whose text comes from a method other than `description`.
    static let extraTypes: Set<String> = ["PathProblem"]

    static let targets = ["PortalAuthCore", "PortalAuthTransport", "PortalAuthStore", "PortalAuth", "portal-auth"]

    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appending(path: "../../../Sources").standardizedFileURL

    /// Every message type of `targets`, by name.
    static func scan() throws -> [String: MessageType] {
        var types: [String: MessageType] = [:]
        var extensions: [(name: String, body: [String])] = []
        for target in targets {
            let folder = sources.appending(path: target)
            guard let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil) else {
                continue
            }
            for case let url as URL in walker where url.pathExtension == "swift" {
                let lines = try code(of: String(contentsOf: url, encoding: .utf8))
                let relative = target + url.path.dropFirst(folder.path.count)
                for declaration in declarations(in: lines) {
                    if declaration.isExtension {
                        extensions.append((declaration.name, declaration.body))
                        continue
                    }
                    let header = declaration.header
                    let isError = header.range(of: #":.*\b(Error|CategorizedError)\b"#, options: .regularExpression)
                    let isText = header.contains("CustomStringConvertible")
                    guard (isError != nil && isText) || extraTypes.contains(declaration.name) else { continue }
                    var type = MessageType(name: declaration.name, file: relative)
                    members(of: declaration.body, typeName: declaration.name, into: &type)
                    if declaration.kind == "struct",
                        !type.makers.contains(where: { $0.hasPrefix("init(") })
                            && !declaration.body.contains(where: {
                                $0.range(of: #"^\s*(private |fileprivate )init\("#, options: .regularExpression) != nil
                            })
                    {
                        type.makers.insert("init(memberwise)")
                    }
                    types[declaration.name] = type
                }
            }
        }
        for (name, body) in extensions where types[name] != nil {
            members(of: [""] + body, typeName: name, into: &types[name]!)
        }
        return types
    }

    /// The lines of `text` without comments and without the text of string literals (so that braces and keywords
    /// in strings do not count).
    static func code(of text: String) -> [String] {
        var lines: [String] = []
        var inString = false
        var multiline = false
        for line in text.components(separatedBy: "\n") {
            var out = ""
            var characters = Array(line)[...]
            while let character = characters.first {
                if !inString, characters.starts(with: "//") { break }
                if characters.starts(with: "\"\"\"") {
                    multiline.toggle()
                    inString = multiline
                    characters = characters.dropFirst(3)
                    out += "\"\""
                    continue
                }
                if character == "\\", inString {
                    characters = characters.dropFirst(2)
                    continue
                }
                if character == "\"", !multiline {
                    inString.toggle()
                    out.append(character)
                } else if !inString {
                    out.append(character)
                }
                characters = characters.dropFirst()
            }
            if !multiline { inString = false }
            lines.append(out)
        }
        return lines
    }

    struct Declaration {
        var kind: String
        var name: String
        var header: String
        var body: [String]
        var isExtension: Bool { kind == "extension" }
    }

    /// The type declarations and extensions of `lines` at any depth: their header (up to `{`) and their body lines
    /// (the header's line first), nested types included.
    static func declarations(in lines: [String]) -> [Declaration] {
        var found: [Declaration] = []
        let pattern =
            #"^\s*(?:@\w+\s+)*(?:(?:public|package|internal|private|fileprivate|final|indirect)\s+)*(struct|enum|class|actor|extension)\s+([A-Za-z_][A-Za-z0-9_.]*)"#
        for (index, line) in lines.enumerated() {
            guard let match = line.range(of: pattern, options: .regularExpression) else { continue }
            let words = line[match].split(whereSeparator: { $0.isWhitespace })
            guard
                let nameIndex = words.lastIndex(where: {
                    ["struct", "enum", "class", "actor", "extension"].contains($0)
                })
            else { continue }
            let kind = String(words[nameIndex])
            let name = String(words[nameIndex + 1].split(separator: ".").last ?? "")
            var header = ""
            var depth = 0
            var opened = false
            var body: [String] = []
            for next in lines[index...] {
                body.append(next)
                if !opened { header += " " + (next.split(separator: "{", maxSplits: 1).first.map(String.init) ?? "") }
                for character in next {
                    if character == "{" {
                        depth += 1
                        opened = true
                    } else if character == "}" {
                        depth -= 1
                    }
                }
                if opened && depth <= 0 { break }
            }
            found.append(Declaration(kind: kind, name: name, header: header, body: body))
        }
        return found
    }

    /// Adds the makers and cases declared directly in `body` (a declaration's lines, its header first) to `type`.
    static func members(of body: [String], typeName: String, into type: inout MessageType) {
        var depth = 0
        var nestedEnumDepth: Int?
        var nestedKindDepth: Int?
        var kindValues: Set<String> = []
        var hasEnum = false
        var continuesCases = false
        var index = 0
        while index < body.count {
            let line = body[index]
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            let atDepth = depth
            if atDepth == 1 {
                if trimmed.range(of: #"^(?:\w+\s+)*enum\s+\w+"#, options: .regularExpression) != nil {
                    nestedEnumDepth = 2
                    hasEnum = true
                } else if trimmed.range(of: #"^(?:\w+\s+)*struct\s+Kind\b"#, options: .regularExpression) != nil {
                    nestedKindDepth = 2
                } else if let maker = maker(startingAt: index, in: body, typeName: typeName) {
                    type.makers.insert(maker)
                }
            } else if atDepth == nestedEnumDepth, trimmed.hasPrefix("case ") || continuesCases {
                let list = trimmed.hasPrefix("case ") ? String(trimmed.dropFirst(5)) : trimmed
                for part in topLevelParts(list) {
                    let name = part.trimmingCharacters(in: .whitespaces).prefix {
                        $0.isLetter || $0.isNumber || $0 == "_"
                    }
                    if !name.isEmpty { type.cases.insert(String(name)) }
                }
            } else if atDepth == nestedKindDepth,
                let match = trimmed.range(of: #"static let \w+ = Kind\("#, options: .regularExpression)
            {
                let name = trimmed[match].dropFirst("static let ".count).prefix { $0 != " " }
                kindValues.insert(String(name))
            }
            continuesCases =
                atDepth == nestedEnumDepth && (trimmed.hasPrefix("case ") || continuesCases) && trimmed.hasSuffix(",")
            for character in line {
                if character == "{" { depth += 1 } else if character == "}" { depth -= 1 }
            }
            if let enumDepth = nestedEnumDepth, depth < enumDepth { nestedEnumDepth = nil }
            if let kindDepth = nestedKindDepth, depth < kindDepth { nestedKindDepth = nil }
            index += 1
        }
        // A `Kind` struct's values are the cases when no enum of the type's own is stored (else its cases are).
        if !hasEnum { type.cases.formUnion(kindValues) }
    }

    /// The selector of the maker declared at `body[index]`, or nil when none is.
    static func maker(startingAt index: Int, in body: [String], typeName: String) -> String? {
        let line = body[index].trimmingCharacters(in: .whitespaces)
        let isPrivate = line.hasPrefix("private ") || line.hasPrefix("fileprivate ")
        // The declaration up to its body, over several lines when its parameters or result are.
        var signature = ""
        for next in body[index..<min(body.count, index + 10)] {
            signature += " " + next.trimmingCharacters(in: .whitespaces)
            if next.contains("{") { break }
        }
        let declares = line.range(
            of: #"^(?:\w+\s+)*(static (let|var|func) |init[?!]?\()"#, options: .regularExpression)
        guard declares != nil else { return nil }
        if let match = line.range(of: #"\bstatic (let|var) \w+"#, options: .regularExpression) {
            let name = line[match].split(separator: " ").last.map(String.init) ?? ""
            let isOwnType =
                line.contains(": \(typeName)") || line.contains("= \(typeName)(") || line.contains("= Self(")
                || line.contains(": Self")
            return isOwnType ? name : nil
        }
        if let match = signature.range(of: #"\bstatic func \w+\("#, options: .regularExpression) {
            let returnsOwnType =
                signature.range(
                    of: #"\)\s*(throws(\([^)]*\))?\s*)?->\s*(\#(typeName)|Self)\b"#, options: .regularExpression) != nil
            guard returnsOwnType else { return nil }
            let name = String(signature[match].dropFirst("static func ".count).dropLast())
            return name + "(" + labels(after: signature[match.upperBound...]) + ")"
        }
        if !isPrivate, let match = signature.range(of: #"^\s*(?:\w+\s+)*init[?!]?\("#, options: .regularExpression) {
            return "init(" + labels(after: signature[match.upperBound...]) + ")"
        }
        return nil
    }

    /// `_:file:detail:` for the parameter list that starts at `text` (after its opening parenthesis).
    static func labels(after text: Substring) -> String {
        var depth = 1
        var list = ""
        for character in text {
            if character == "(" || character == "[" || character == "<" { depth += 1 }
            if character == ")" || character == "]" || character == ">" { depth -= 1 }
            if depth == 0 { break }
            list.append(character)
        }
        return topLevelParts(list).compactMap { part -> String? in
            let label = part.trimmingCharacters(in: .whitespaces).prefix { $0 != " " && $0 != ":" }
            return label.isEmpty ? nil : label + ":"
        }.joined()
    }

    /// `text` split at its commas outside brackets.
    static func topLevelParts(_ text: String) -> [String] {
        var parts: [String] = []
        var depth = 0
        var current = ""
        for character in text {
            if "([<{".contains(character) { depth += 1 }
            if ")]>}".contains(character) { depth -= 1 }
            if character == ",", depth == 0 {
                parts.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        if !current.trimmingCharacters(in: .whitespaces).isEmpty { parts.append(current) }
        return parts
    }
}
