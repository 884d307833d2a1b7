import Foundation
import Glibc
import PortalAuth
import Synchronization

/// The error a command reported, kept so that `--format json` can repeat it as a JSON object on stdout.
enum ErrorReport {
    /// The message and category of the last error reported (by `Failure.report` or the argument parser).
    static let last = Mutex<(message: String, category: ErrorCategory)?>(nil)

    /// Whether a command already printed its JSON document on stdout (then a failure adds no second one: the
    /// exit status and standard error tell it).
    static let printedJSON = Mutex(false)

    /// The commands the last error reported suggested (`SuggestingCommand`): the one to run, and another.
    static let suggested = Mutex<(command: String?, alternative: String?)>((nil, nil))

    /// Records an error reported on standard error.
    static func record(_ message: String, category: ErrorCategory) {
        last.withLock { $0 = (message, category) }
    }

    /// A usage error (the argument parser's, or a command's `ValidationError`) made safe for the terminal, as other
    /// untrusted text is: each argument value it quotes is shown as `DisplayText.path` shows it (every control
    /// character, line breaks included, a visible escape such as `\u{1B}`), and so is any control character left in
    /// a line (a value the message cut short); the message's own lines stay lines.
    static func escapingArguments(_ message: String, arguments: [String]) -> String {
        var text = message
        let values =
            arguments
            + arguments.compactMap {
                $0.hasPrefix("--") ? $0.split(separator: "=", maxSplits: 1).dropFirst().first.map(String.init) : nil
            }
        for value in Set(values) where DisplayText.containsControlCharacters(value) {
            text = text.replacing(value, with: DisplayText.path(value))
        }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { DisplayText.path(String($0)) }
            .joined(separator: "\n")
    }

    /// The category's name in JSON errors: `usage`, `invalid_content`, `unreadable_input`, `unavailable`, `local`,
    /// `timed_out`, `refused`, `cancelled`.
    static func name(of category: ErrorCategory) -> String {
        switch category {
        case .usage: return "usage"
        case .invalidContent: return "invalid_content"
        case .unreadableInput: return "unreadable_input"
        case .unavailable: return "unavailable"
        case .local: return "local"
        case .timedOut: return "timed_out"
        case .refused: return "refused"
        case .cancelled: return "cancelled"
        }
    }

    /// `{"error": {"status": 77, "category": "refused", "message": "…", "command": …, "alternative_command": …}}`:
    /// what `--format json` prints on stdout when a command fails (the message is also on standard error, and never
    /// holds a token). `command` is the command the message suggests, `{"argv": […], "shell": "…"}`, or null;
    /// `alternative_command` another that would do (the same command with `--interactive`), or null.
    static func json(status: Int32, message: String, category: ErrorCategory) -> JSONValue {
        let commands = suggested.withLock { $0 }
        return .object([
            "error": .object([
                "status": .integer(Int64(status)),
                "category": .string(name(of: category)),
                "message": .string(message),
                "command": SuggestedCommand.json(commands.command),
                "alternative_command": SuggestedCommand.json(commands.alternative),
            ])
        ])
    }

    /// Whether the command line asks for JSON output (`--format json` or `--format=json`).
    static func wantsJSON(_ arguments: [String]) -> Bool {
        if arguments.contains("--format=json") { return true }
        return zip(arguments, arguments.dropFirst()).contains { $0 == "--format" && $1 == "json" }
    }

    // MARK: - The tool's words for library errors

    /// `error` as the tool says it: the library's errors name the library's settings and API (an app has no
    /// options); the tool gives its own advice, with its options, for the same cases. Every suggestion is one that
    /// can work here (no `--no-browser` without a terminal, no `--device-code` for a target that has none).
    ///
    /// - Parameter hasTerminal: whether standard input is a terminal (where pasting works).
    static func message(for error: any Error, hasTerminal: Bool = isatty(0) == 1) -> String {
        switch error {
        case let advised as Advised:
            return message(for: advised.error, hasTerminal: hasTerminal) + "\n" + advised.advice
        case let signIn as SignInError:
            return message(for: signIn, hasTerminal: hasTerminal)
        case let deviceCode as DeviceCodeError:
            if case .timedOut(let seconds) = deviceCode.code {
                return
                    "the sign-in was not approved within the time limit of \(seconds) s (--timeout); the code was still valid. "
                    + advice(for: deviceCode, hasTerminal: hasTerminal)
            }
            return deviceCode.summary + " " + advice(for: deviceCode, hasTerminal: hasTerminal)
        case let selection as SelectionError:
            return message(for: selection)
        case let keyring as KeyringError:
            return "the desktop keyring cannot be used: \(toolWords(keyring.message)); \(toolWords(keyring.advice))"
        default:
            return toolWords("\(error)")
        }
    }

    /// "on a terminal (over SSH: ssh -t)", the way to reach paste-back from where the tool runs.
    private static let onATerminal = "on a terminal (over SSH: ssh -t)"
    /// The advice to name a browser that a person sees here.
    private static let nameABrowser =
        "name a browser that works here with --browser-command COMMAND (or BROWSER=COMMAND)"

    private static func message(for error: SignInError, hasTerminal: Bool) -> String {
        switch error.code {
        case .timedOut:
            let pasteBack = hasTerminal ? "use --no-browser" : "run it \(onATerminal) with --no-browser"
            return error.summary + " Finish signing in in the browser sooner, or give more time with --timeout; if the "
                + "browser never opened, \(pasteBack) and open the printed URL by hand. An error page in the browser means "
                + "the client ID or the redirect URL is not registered with the identity provider."
        case .noRemotePath(let reason, let deviceCodeRuledOut):
            return "no browser can be used here (\(reason)) and there is no terminal to paste the final address on. "
                + "Run the command \(onATerminal), or \(nameABrowser)"
                + (deviceCodeRuledOut ? "." : ", or use --device-code where the identity provider offers it.")
        case .noRemoteLogout(let reason):
            return
                "no browser can be used here (\(reason)) and there is no terminal to paste the address the browser ends on, "
                + "so the browser session at the identity provider stays. Run the command \(onATerminal) to end it."
        case .portalHasNoDeviceCode:
            return
                "ArcGIS portals have no device code; sign in \(onATerminal) with --no-browser (paste the final address), "
                + "or with --redirect-url urn:ietf:wg:oauth:2.0:oob where the app's registration lists it, or \(nameABrowser)."
        case .unheard:
            return error.summary + " Run the command \(onATerminal), or \(nameABrowser)."
        case .inputClosed:
            return "standard input ended (Ctrl-D, or input that is not a terminal) before the address the browser ends "
                + "on was pasted, so the sign-in stopped. Run the command again \(onATerminal) and paste the whole "
                + "address from the browser's address bar, or sign in with --device-code where the identity provider "
                + "offers one."
        default:
            return toolWords(error.summary)
        }
    }

    private static func advice(for error: DeviceCodeError, hasTerminal: Bool) -> String {
        switch error.code {
        case .notOffered:
            let pasteBack =
                hasTerminal
                ? "on another machine: --no-browser, then paste the address it ends on"
                : "\(nameABrowser), or run the command \(onATerminal) with --no-browser"
            return "Name the endpoint (--device-authorization-url URL), or sign in through a browser (\(pasteBack))."
        case .denied: return "Run the command again to retry."
        case .expired: return "Run the command again for a new code."
        case .timedOut: return "Run the command again, with a larger --timeout if approving takes longer."
        case .invalidResponse: return ""
        }
    }

    private static func message(for error: SelectionError) -> String {
        switch error.code {
        case .ambiguous(let choices):
            return
                "\(choices.count) sign-ins are stored and none is the default; say which with --portal URL, --iap FILE, "
                + "--url URL or --name NAME, or make one the default with `portal-auth use`:\n"
                + choices.map { "    \($0)" }.joined(separator: "\n")
        case .unknownName(_, let known) where known.isEmpty:
            return "\(error) (give one with `portal-auth name NAME …`)"
        default:
            return "\(error)"
        }
    }

    /// The library's names of its settings, in a message the tool shows, as the tool's options.
    private static let toolTerms: [(library: String, tool: String)] = [
        (
            "TransportConfiguration.TLS.caBundle, or PORTAL_AUTH_CA_BUNDLE=FILE",
            "--ca-bundle FILE or PORTAL_AUTH_CA_BUNDLE=FILE"
        ),
        ("TransportConfiguration.TLS.caBundle or PORTAL_AUTH_CA_BUNDLE", "--ca-bundle or PORTAL_AUTH_CA_BUNDLE"),
        ("give the store a path (PORTAL_AUTH_STORE=PATH)", "pass --store PATH"),
        ("(PORTAL_AUTH_STORE=file)", "(--store file)"),
        ("(PORTAL_AUTH_STORE)", "(--store PATH or PORTAL_AUTH_STORE)"),
        (
            "(OAuthUserCredential.credential(for:settings:) or IAPCredential.credential(for:settings:replacing:))",
            "(portal-auth login, or portal-auth iap login)"
        ),
        ("(IAPCredential.credential(for:settings:replacing:))", "(portal-auth iap login)"),
        (
            "(IAPConfiguration.issuer, the configuration file's issuer)",
            "(--issuer, or the configuration file's issuer)"
        ),
        ("(register(force: true))", "(--force)"),
        // The sign-in's and logout's settings (SignInError.appAdvice), where a library error reaches the tool inside
        // another message (a sign-out's outcome): the longer phrases first.
        (
            "(SignInSettings.browser, SignInSettings.browserCommand(_:arguments:))",
            "(--browser-command COMMAND, or BROWSER=COMMAND)"
        ),
        ("(SignInSettings.browser)", "(--browser-command COMMAND, or BROWSER=COMMAND)"),
        (
            "pasted addresses (SignInSettings.takePastedAddresses(from:))",
            "the address pasted on a terminal (run the command on one; over SSH: ssh -t)"
        ),
        (
            "Keep the pasted lines open until the address is pasted (SignInSettings.takePastedAddresses(from:))",
            "Keep standard input open until the address is pasted (run the command on a terminal; over SSH: ssh -t)"
        ),
        (
            "(with pasted addresses: SignInSettings.takePastedAddresses(from:))",
            "(--no-browser, on a terminal: over SSH, ssh -t)"
        ),
        (
            "a device code shown by the observer (SignInMethod.deviceCode, SignInObserver.deviceCodeIssued)",
            "a device code (--device-code)"
        ),
        ("SignInSettings.signInMethod .pasteBack or .deviceCode", "--no-browser or --device-code"),
        ("(SignInSettings.timeout)", "(--timeout)"),
        ("SignInMethod.deviceCode", "--device-code"),
        ("SignInMethod.pasteBack", "--no-browser"),
        (
            "with SignInMethod.outOfBand where the app's registration lists urn:ietf:wg:oauth:2.0:oob",
            "with --redirect-url urn:ietf:wg:oauth:2.0:oob where the app's registration lists it"
        ),
        ("the time limit for keyring calls", "the command's time limit (--timeout)"),
        ("Use a newer PortalAuth", "Use a newer portal-auth"),
    ]

    /// `text` with the library's setting names replaced by the tool's options (``toolTerms``).
    static func toolWords(_ text: String) -> String {
        toolTerms.reduce(text) { $0.replacingOccurrences(of: $1.library, with: $1.tool) }
    }
}
