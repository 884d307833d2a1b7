import Foundation
import Testing

/// The library speaks its own public API (issue 45): every type and member that a library message (a string literal
/// of `Sources/PortalAuth*`) or a public declaration's doc comment names is one an app can use — declared `public`
/// (or `open`), or a requirement or case of a public protocol or enum — and no library message names a command of
/// the tool. A source scan: names the library does not declare (Foundation's, swift-log's, JSON keys, paths) are not
/// its to check.
@Suite("Library names only public API")
struct LibraryPublicNamesTests {
    /// One Swift source file of the library.
    struct Source {
        let path: String
        let lines: [String]
    }

    /// What the library declares: every name, the type names, and those an app can use.
    struct Declarations {
        var all: Set<String> = []
        var types: Set<String> = []
        var publicNames: Set<String> = []
        var publicTypes: Set<String> = []
    }

    nonisolated(unsafe) static let declaration =
        /^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(public|open|package|private|fileprivate|internal)(?:\(set\))?\s+)?(?:(?:public|open|package|private|fileprivate|internal)(?:\(set\))?\s+)?(?:(?:static|final|override|class|nonisolated|mutating|indirect|convenience|required|lazy|weak|dynamic)\s+)*(func|var|let|case|init|subscript|struct|enum|class|protocol|typealias|actor|associatedtype|extension)\b\s*([A-Za-z_]\w*)?/

    static let typeKinds: Set<String> = ["struct", "enum", "class", "protocol", "typealias", "actor"]

    static func sources() throws -> [Source] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appending(path: "../../../Sources")
            .standardizedFileURL
        var sources: [Source] = []
        for target in try FileManager.default.contentsOfDirectory(atPath: root.path)
        where target.hasPrefix("PortalAuth") {
            let folder = root.appending(path: target)
            let files =
                FileManager.default.enumerator(atPath: folder.path)?.compactMap { $0 as? String }.filter {
                    $0.hasSuffix(".swift")
                } ?? []
            for file in files {
                let text = try String(contentsOf: folder.appending(path: file), encoding: .utf8)
                sources.append(
                    Source(
                        path: "\(target)/\(file)",
                        lines: text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)))
            }
        }
        return sources
    }

    static func indent(_ line: String) -> Int { line.prefix { $0 == " " }.count }

    /// A declaration on a line: its access modifier (empty when none), kind and name.
    typealias Declared = (access: String, kind: String, name: String)

    /// The declaration on each line of `lines`, if any (matched once per line).
    static func declarationsByLine(_ lines: [String]) -> [Declared?] {
        lines.map { line in
            guard let match = try? declaration.firstMatch(in: line) else { return nil }
            let kind = String(match.output.2)
            return (match.output.1.map(String.init) ?? "", kind, match.output.3.map(String.init) ?? kind)
        }
    }

    /// The types and extensions that enclose line `index`, innermost first (each an earlier declaration indented
    /// less than the one before).
    static func enclosing(_ lines: [String], _ matches: [Declared?], _ index: Int) -> [Declared] {
        var chain: [Declared] = []
        var own = indent(lines[index])
        var earlier = index - 1
        while own > 0, earlier >= 0 {
            defer { earlier -= 1 }
            guard let found = matches[earlier], typeKinds.contains(found.kind) || found.kind == "extension" else {
                continue
            }
            let depth = indent(lines[earlier])
            guard depth < own else { continue }
            chain.append(found)
            own = depth
        }
        return chain
    }

    /// Whether every type around a declaration is one an app sees (an extension: of a public type or of another
    /// module's), and whether its innermost one is a public protocol or enum (whose members need no modifier).
    static func outerVisibility(_ chain: [Declared], _ found: Declarations) -> (visible: Bool, implicitlyPublic: Bool) {
        let visible = chain.allSatisfy { outer in
            outer.kind == "extension"
                ? found.publicTypes.contains(outer.name) || !found.types.contains(outer.name)
                : ["public", "open"].contains(outer.access)
        }
        let implicit = chain.first.map { ["protocol", "enum"].contains($0.kind) } ?? false
        return (visible, visible && implicit)
    }

    static func declarations(in sources: [Source]) -> Declarations {
        var found = Declarations()
        // First the types, so that an extension's members know whether their type is public.
        for source in sources {
            for line in source.lines {
                guard let match = try? declaration.firstMatch(in: line), let name = match.output.3 else { continue }
                let kind = String(match.output.2)
                guard typeKinds.contains(kind) else { continue }
                found.types.insert(String(name))
                if ["public", "open"].contains(match.output.1.map(String.init) ?? "") {
                    found.publicTypes.insert(String(name))
                }
            }
        }
        for source in sources {
            let matches = declarationsByLine(source.lines)
            for (index, line) in source.lines.enumerated() {
                guard let (access, kind, name) = matches[index], kind != "extension" else { continue }
                let outer = outerVisibility(enclosing(source.lines, matches, index), found)
                let isPublic =
                    outer.visible
                    && (access == "public" || access == "open" || (access.isEmpty && outer.implicitlyPublic))
                var names: [String] = []
                if kind == "case" {
                    let rest = line.trimmingCharacters(in: .whitespaces).dropFirst(5)
                    names = rest.split(separator: ",").compactMap {
                        let name = $0.split(separator: "(")[0].split(separator: "=")[0].trimmingCharacters(
                            in: .whitespaces)
                        return name.first?.isLowercase == true && name.allSatisfy { $0.isLetter || $0.isNumber }
                            ? name : nil
                    }
                } else {
                    names = [name]
                }
                for name in names {
                    found.all.insert(name)
                    if isPublic { found.publicNames.insert(name) }
                }
            }
        }
        return found
    }

    /// Words of the protocols that are also the names of package types: "the UserInfo endpoint" (OpenID Connect).
    static let protocolTerms: Set<String> = ["UserInfo"]

    /// The names of `reference` (`Type.member(label:)`, `member(label:)`, `Type`; a message's bare `Type` is CamelCase) that the library declares but not
    /// for apps.
    static func nonPublic(_ reference: String, _ declared: Declarations) -> [String] {
        var names: [String] = []
        var depth = 0
        var current = ""
        for character in reference {
            if character == "(" { depth += 1 }
            if character == ")" { depth -= 1 }
            if character == ".", depth == 0 {
                names.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        names.append(current)
        return names.map { String($0.prefix { $0 != "(" }) }.filter { name in
            guard let first = name.first else { return false }
            if first.isUppercase {
                return declared.types.contains(name) && !declared.publicTypes.contains(name)
                    && !protocolTerms.contains(name)
            }
            return declared.all.contains(name) && !declared.publicNames.contains(name)
        }
    }

    /// `line` without its string interpolations (`\(…)`, which are code).
    static func withoutInterpolations(_ line: String) -> String {
        var result = ""
        var characters = Array(line)[...]
        while let first = characters.first {
            characters = characters.dropFirst()
            if first == "\\", characters.first == "(" {
                var depth = 0
                while let next = characters.first {
                    characters = characters.dropFirst()
                    if next == "(" { depth += 1 }
                    if next == ")" {
                        depth -= 1
                        if depth == 0 { break }
                    }
                }
                continue
            }
            result.append(first)
        }
        return result
    }

    nonisolated(unsafe) static let symbolSpan = /^[A-Za-z_]\w*(?:\([\w:]*\))?(?:\.[A-Za-z_]\w*(?:\([\w:]*\))?)*$/
    nonisolated(unsafe) static let messageName =
        /\b([A-Z][A-Za-z0-9]+(?:\.[a-z][A-Za-z0-9]*(?:\([A-Za-z0-9_:]*\))?)+|[a-z][A-Za-z0-9]*\((?:[a-z_][A-Za-z0-9]*:)+\)|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*\b)/
    nonisolated(unsafe) static let toolCommand =
        /portal-auth (?:login|iap|token|status|sign-out|logout|request|exec|refresh|revoke|use|name|store)\b/

    /// Every place a library message or a public doc comment names something an app cannot use.
    static func findings(in sources: [Source], _ declared: Declarations) -> [String] {
        var found: [String] = []
        for source in sources {
            var inCode = false
            let matches = declarationsByLine(source.lines)
            for (index, line) in source.lines.enumerated() {
                let code = line.trimmingCharacters(in: .whitespaces)
                let place = "\(source.path):\(index + 1)"
                if code.hasPrefix("///") {
                    if code.contains("```") { inCode.toggle() }
                    guard !inCode else { continue }
                    // The doc comment of a public declaration: the next line that is not doc or attribute.
                    var next = index + 1
                    while next < source.lines.count,
                        source.lines[next].trimmingCharacters(in: .whitespaces).hasPrefix("///")
                            || source.lines[next].trimmingCharacters(in: .whitespaces).hasPrefix("@")
                    {
                        next += 1
                    }
                    guard next < source.lines.count, let target = matches[next],
                        ["public", "open"].contains(target.access),
                        outerVisibility(enclosing(source.lines, matches, next), declared).visible
                    else { continue }
                    for span in code.split(separator: "`", omittingEmptySubsequences: true).enumerated()
                    where span.offset % 2 == 1 {
                        let text = span.element.replacingOccurrences(of: "/", with: ".")
                        guard (try? symbolSpan.wholeMatch(in: text)) != nil else { continue }
                        // A lower-case word alone is a parameter, a key or a value; a member is called or qualified.
                        let isCall = text.contains("(") && !text.prefix { $0 != "(" }.contains(".")
                        guard text.first?.isUppercase == true || isCall else { continue }
                        let names = nonPublic(text, declared)
                        if !names.isEmpty { found.append("\(place): doc `\(text)` names \(names), not public") }
                    }
                } else if !code.hasPrefix("//"), code.contains("\"") {
                    let text = withoutInterpolations(code)
                    for match in text.matches(of: messageName) {
                        // Inside a string literal: an odd number of quotes before it.
                        guard text[..<match.range.lowerBound].filter({ $0 == "\"" }).count % 2 == 1 else { continue }
                        let reference = String(match.output.1)
                        guard !reference.hasPrefix("PortalAuth.") else { continue }  // a logger or queue label
                        let names = nonPublic(reference, declared)
                        if !names.isEmpty { found.append("\(place): message names \(reference): \(names), not public") }
                    }
                    for match in text.matches(of: toolCommand)
                    where text[..<match.range.lowerBound].filter({ $0 == "\"" }).count % 2 == 1 {
                        found.append("\(place): message names the tool's command \(match.output)")
                    }
                }
            }
        }
        return found
    }

    /// The library's sources and declarations, read once for every test of the suite.
    static let library: (sources: [Source], declared: Declarations)? = {
        guard let sources = try? sources() else { return nil }
        return (sources, declarations(in: sources))
    }()

    @Test("every type and member named in a library message or a public doc comment is public API (issue 45)")
    func namesArePublic() throws {
        let (sources, declared) = try #require(Self.library)
        #expect(sources.count > 100)
        #expect(declared.publicTypes.contains("AuthenticationManager") && declared.publicNames.contains("signOut"))
        #expect(!declared.publicTypes.contains("CredentialStoreFile"))
        let found = Self.findings(in: sources, declared)
        #expect(found.isEmpty, "\(found.count) names an app cannot use:\n\(found.joined(separator: "\n"))")
    }

    @Test(
        "the scan finds what an app cannot call",
        arguments: [
            ("/// see `CredentialStoreFile.select(store:environment:)`", true),
            ("/// see `AuthenticationManager.signOut()`", false),
            ("/// `IAPLogoutResult`", false),
            (#"return "sign in again (portal-auth login)""#, true),
            (#"return "set it (CredentialStoreFile.select(store:environment:))""#, true),
            (#"return "set it (SignInSettings.timeout)""#, false),
            (#"return "nothing shows it (the observer is SilentSignInObserver)""#, true),
            (#"return "nothing shows it (SignInSettings.observer)""#, false),
        ])
    func scanFinds(line: String, expected: Bool) throws {
        let declared = try #require(Self.library).declared
        let lines = [line, "    public func example() {}"]
        let source = Source(path: "Example.swift", lines: lines)
        #expect(!Self.findings(in: [source], declared).isEmpty == expected, "\(line)")
    }
}
