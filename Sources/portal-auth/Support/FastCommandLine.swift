import ArgumentParser
import Glibc

/// `portal-auth token` and `portal-auth refresh` read without ArgumentParser, because scripts run them before
/// every call: building the full command tree costs more than the token itself (issue 17).
///
/// It reads only a plain subset: `--name value` or `--name=value` for the options below, each at most once,
/// no empty value and no value that starts with `-`. It fills the same `TokenInvocation` / `RefreshInvocation`
/// that the ArgumentParser commands fill and runs their own validation; anything else (help, another option,
/// `--interactive`, a repeated option, an invalid value or combination) returns nil, and the full parser takes
/// the command line, so its messages and usage stay the only ones. `PORTAL_AUTH_NO_FAST_PATH` (set to anything)
/// sends everything to the full parser; the differential tests compare the two.
enum FastCommandLine {
    /// The environment variable that turns the fast path off.
    static let disablingVariable = "PORTAL_AUTH_NO_FAST_PATH"

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
    private static let sharedValues: Set<String> = ["portal", "client-id", "iap", "url", "store", "timeout", "ca-bundle"]

    /// The invocation for `arguments` (without the program name), or nil when the full parser must read them.
    static func invocation(_ arguments: [String]) -> Invocation? {
        guard getenv(disablingVariable) == nil, let command = arguments.first else { return nil }
        switch command {
        case "token":
            guard let found = options(arguments.dropFirst(), values: sharedValues.union(["min-valid", "format", "header-name"]), flags: ["id-token"]),
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
            guard (try? invocation.validate()) != nil else { return nil }
            return .token(invocation)
        case "refresh":
            guard let found = options(arguments.dropFirst(), values: sharedValues, flags: ["print-token"]),
                  let selection = selection(found), let session = session(found)
            else { return nil }
            return .refresh(RefreshInvocation(selection: selection, printToken: found["print-token"] != nil, session: session))
        default:
            return nil
        }
    }

    // MARK: - Reading

    /// Option name → value ("" for a flag), or nil when a word is not one of `values` or `flags` in the plain form.
    private static func options(_ words: ArraySlice<String>, values: Set<String>, flags: Set<String>) -> [String: String]? {
        var found: [String: String] = [:]
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
            guard found.updateValue(String(value ?? ""), forKey: key) == nil else { return nil }
        }
        return found
    }

    /// The selection values, if valid.
    private static func selection(_ found: [String: String]) -> SelectionArguments? {
        let selection = SelectionArguments(portal: found["portal"], clientID: found["client-id"], iap: found["iap"], url: found["url"])
        guard (try? selection.validate()) != nil else { return nil }
        return selection
    }

    /// The session values, if valid.
    private static func session(_ found: [String: String]) -> SessionArguments? {
        var session = SessionArguments(store: found["store"], caBundle: found["ca-bundle"])
        if let text = found["timeout"] {
            guard let timeout = Int(text) else { return nil }
            session.timeout = timeout
        }
        guard (try? session.validate()) != nil else { return nil }
        return session
    }
}
