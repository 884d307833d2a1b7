import ArgumentParser
import Glibc

/// `portal-auth token` and `portal-auth refresh` read without ArgumentParser, because scripts run them before
/// every call: building the full command tree costs more than the token itself (issue 17).
///
/// It reads only a plain subset: `--name value` or `--name=value` for the options below, each at most once,
/// no empty value and no value that starts with `-`. It fills the same `TokenInvocation` / `RefreshInvocation`
/// that the ArgumentParser commands fill and runs their own validation; anything else (help, another option,
/// `--interactive`, a repeated option, an invalid value or combination) returns nil, and the full parser takes
/// the command line, so its messages and usage stay the only ones.
///
/// `PORTAL_AUTH_FAST_PATH=off` sends every command line to the full parser, and `PORTAL_AUTH_FAST_PATH=only`
/// refuses one the fast path does not take (exit 70): the differential tests compare the two paths with them,
/// and the benchmark makes sure it measures the fast one.
enum FastCommandLine {
    /// The environment variable that chooses the mode.
    static let modeVariable = "PORTAL_AUTH_FAST_PATH"

    /// Whether the fast path is tried.
    enum Mode {
        /// Tried; the full parser takes what it does not.
        case automatic
        /// Never tried.
        case off
        /// Tried, and a command line it does not take is an error.
        case only

        /// The mode `PORTAL_AUTH_FAST_PATH` asks for (automatic when unset or another value).
        static var current: Mode {
            guard let value = getenv(modeVariable) else { return .automatic }
            switch String(cString: value) {
            case "off": return .off
            case "only": return .only
            default: return .automatic
            }
        }
    }

    /// The message of `PORTAL_AUTH_FAST_PATH=only` for a command line the fast path does not take.
    static let refusal = "portal-auth: error: PORTAL_AUTH_FAST_PATH=only and this command line needs the full parser"

    /// A command the fast path understood fully.
    enum Invocation {
        case token(TokenInvocation)
        case refresh(RefreshInvocation)

        /// Runs it, as the ArgumentParser command would.
        func run() async throws {
            switch self {
            case .token(let invocation): try await invocation.run()
            case .refresh(let invocation): try await invocation.run()
            }
        }
    }

    /// The options of both commands: the selection and the session values they use without a browser.
    /// (Arrays, not sets or dictionaries, here and below: a first `Set<String>` costs the process a scan of every
    /// protocol conformance in the binary, as much as the rest of the fast path.)
    private static let sharedValues = ["portal", "client-id", "iap", "url", "name", "store", "timeout", "ca-bundle"]

    /// The invocation for `arguments` (without the program name), or nil when the full parser must read them.
    static func invocation(_ arguments: [String]) -> Invocation? {
        guard let command = arguments.first else { return nil }
        switch command {
        case "token":
            guard
                let found = options(
                    arguments.dropFirst(),
                    values: sharedValues + ["min-valid", "format", "header-name", "proxy-token"], flags: ["id-token"]),
                let selection = selection(found), let session = session(found)
            else { return nil }
            var invocation = TokenInvocation(selection: selection, session: session)
            if let text = found["min-valid"] {
                guard let minValid = Int(text) else { return nil }
                invocation.minValid = minValid
            }
            if let text = found["format"] {
                guard let format = TokenFormat(rawValue: text) else { return nil }
                invocation.format = format
            }
            invocation.headerName = found["header-name"]
            invocation.idToken = found["id-token"] != nil
            if let text = found["proxy-token"] {
                guard let choice = ProxyTokenChoice(rawValue: text) else { return nil }
                invocation.proxyToken = choice
            }
            guard (try? invocation.validate()) != nil else { return nil }
            return .token(invocation)
        case "refresh":
            guard let found = options(arguments.dropFirst(), values: sharedValues + ["format"], flags: ["print-token"]),
                let selection = selection(found), let session = session(found)
            else { return nil }
            var invocation = RefreshInvocation(
                selection: selection, printToken: found["print-token"] != nil, session: session)
            if let text = found["format"] {
                guard let format = TokenFormat(rawValue: text) else { return nil }
                invocation.format = format
            }
            return .refresh(invocation)
        default:
            return nil
        }
    }

    // MARK: - Reading

    /// The options found: name and value ("" for a flag), each name once.
    private struct Found {
        var pairs: [(name: String, value: String)] = []

        subscript(name: String) -> String? {
            pairs.first { $0.name == name }?.value
        }
    }

    /// The options in `words`, or nil when a word is not one of `values` or `flags` in the plain form.
    private static func options(_ words: ArraySlice<String>, values: [String], flags: [String]) -> Found? {
        var found = Found()
        var index = words.startIndex
        while index < words.endIndex {
            let word = words[index]
            index += 1
            guard word.hasPrefix("--") else { return nil }
            var name = Substring(word.dropFirst(2))
            var value: Substring?
            if let equals = name.firstIndex(of: "=") {
                value = name[name.index(after: equals)...]
                name = name[..<equals]
            }
            let key = String(name)
            if flags.contains(key) {
                guard value == nil else { return nil }
                value = ""
            } else if values.contains(key) {
                if value == nil {
                    guard index < words.endIndex else { return nil }
                    value = Substring(words[index])
                    index += 1
                }
                guard let given = value, !given.isEmpty, !given.hasPrefix("-") else { return nil }
            } else {
                return nil
            }
            guard found[key] == nil else { return nil }
            found.pairs.append((key, String(value ?? "")))
        }
        return found
    }

    /// The selection values, if valid.
    private static func selection(_ found: Found) -> SelectionArguments? {
        let selection = SelectionArguments(
            portal: found["portal"], clientID: found["client-id"], iap: found["iap"], url: found["url"],
            name: found["name"])
        guard (try? selection.validate()) != nil else { return nil }
        return selection
    }

    /// The session values, if valid.
    private static func session(_ found: Found) -> SessionArguments? {
        var session = SessionArguments(store: found["store"], caBundle: found["ca-bundle"])
        if let text = found["timeout"] {
            guard let timeout = Int(text) else { return nil }
            session.timeout = timeout
        }
        guard (try? session.validate()) != nil else { return nil }
        return session
    }
}
