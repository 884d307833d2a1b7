internal import CPortalAuthSystem
package import Foundation
import Glibc
import PortalAuthCore

/// Opens URLs by running a command: `--browser-command`, else `$BROWSER`, else on WSL the Windows browser, else
/// `xdg-open`.
///
/// The command is split into words like a shell would (quotes, no expansion). A `%s` word is
/// replaced by the address; otherwise the address is appended as the last argument. The process runs in
/// its own session, so Ctrl-C in the terminal does not close the browser, and nothing is run through a shell.
/// Its standard input, output and error are `/dev/null`: a launcher's or a browser's own lines ("Opening in existing
/// browser session.", log lines) never reach the terminal or the tool's output (a `--format json` document stays
/// valid), and no other descriptor of this process (a libcurl socket, the loopback listener) is inherited.
///
/// The URL itself never goes into the command's arguments, which every local user can read: the command gets the
/// `file:` address of a private ``BrowserLaunchPage`` that forwards the browser to the URL (a Windows launcher on WSL
/// gets the page's `\\wsl$\DISTRO\…` path, which Windows can open).
package struct CommandBrowserOpener: LaunchPageBrowserOpener {
    /// The commands to try in order (`$BROWSER` may list several, separated by `:`).
    public let commands: [String]
    /// The folder for launch pages; `nil`: ``BrowserLaunchPage/directory(forCommand:environment:)`` for the command.
    public var launchDirectory: URL?
    /// Whether the command was named by the person or the app (`$BROWSER`, a browser command, WSL's Windows
    /// browser) rather than being the desktop's launcher `xdg-open`, which needs a display.
    public let isVisibleWithoutDisplay: Bool
    /// How the launch page is given to the command.
    package var addressStyle: AddressStyle = .fileURL
    /// Why this opener (the desktop's launcher, chosen on WSL because no Windows browser was found) may reach
    /// nobody, and the fix: said with the missing display when no browser is started.
    package var unreachedReason: String?

    /// How the command receives the launch page.
    package enum AddressStyle: Sendable, Equatable {
        /// `file:///run/user/1000/portal-auth/…`: Linux browsers and launchers.
        case fileURL
        /// `\\wsl$\DISTRO\run\user\1000\portal-auth\…`: a Windows program started from WSL (`cmd.exe`,
        /// `powershell.exe`), which cannot read Linux paths.
        case windowsPath(distribution: String)
    }

    /// An opener for one command, named by the person or the app (tried even without a display).
    public init(command: String) {
        self.init(commands: [command], isVisibleWithoutDisplay: true)
    }

    /// An opener that runs `executable` with `arguments` (a `%s` argument is replaced by the address, else it is
    /// appended), quoted so that no word is split again.
    package init(executable: String, arguments: [String]) {
        self.init(command: ([executable] + arguments).map(Self.quotedWord).joined(separator: " "))
    }

    /// The opener the tool uses by default: `override`, else `$BROWSER`, else on WSL (``WindowsSubsystem``) `wslview`
    /// when it is on `PATH`, else the Windows default browser through `cmd.exe /c start` or `powershell.exe
    /// Start-Process` (as gh and az do), else `xdg-open`.
    public static func systemDefault(
        override: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment,
        kernelRelease: String? = WindowsSubsystem.kernelRelease()
    ) -> CommandBrowserOpener {
        if let override, !override.trimmingCharacters(in: .whitespaces).isEmpty {
            return CommandBrowserOpener(command: override)
        }
        if let browser = environment["BROWSER"], !browser.trimmingCharacters(in: .whitespaces).isEmpty {
            return CommandBrowserOpener(
                commands: browser.split(separator: ":").map(String.init), isVisibleWithoutDisplay: true)
        }
        let windowsSubsystem = WindowsSubsystem(environment: environment, kernelRelease: kernelRelease)
        if let windows = windowsSubsystem?.browserOpener() {
            return windows
        }
        var launcher = CommandBrowserOpener(commands: ["xdg-open"], isVisibleWithoutDisplay: false)
        launcher.unreachedReason = windowsSubsystem?.missingOpenerReason
        return launcher
    }

    package init(commands: [String], isVisibleWithoutDisplay: Bool) {
        self.commands = commands
        self.isVisibleWithoutDisplay = isVisibleWithoutDisplay
    }

    /// `word` in single quotes when it needs them, for ``splitWords(_:)`` to give it back whole.
    static func quotedWord(_ word: String) -> String {
        if !word.isEmpty, word.allSatisfy({ $0.isLetter || $0.isNumber || "/._-%=:,+@".contains($0) }) { return word }
        return "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// Starts the browser through a launch page that is removed when the process exits (use
    /// ``launch(_:onExit:)`` to remove it as soon as the sign-in ends).
    public func open(_ url: URL, onExit: @escaping @Sendable (Int32) -> Void) throws(BrowserError) {
        LingeringPages.shared.keep(try start(url, onExit: onExit))
    }

    /// Starts the browser through a launch page; the caller removes the page when the sign-in ends.
    package func launch(_ url: URL, onExit: @escaping @Sendable (Int32) -> Void) throws(BrowserError)
        -> BrowserLaunchPage?
    {
        try start(url, onExit: onExit)
    }

    private func start(_ url: URL, onExit: @escaping @Sendable (Int32) -> Void) throws(BrowserError)
        -> BrowserLaunchPage
    {
        var lastError: BrowserError?
        for command in commands {
            let words = Self.splitWords(command)
            guard !words.isEmpty else { continue }
            let page: BrowserLaunchPage
            do {
                page = try BrowserLaunchPage(
                    forwardingTo: url, in: launchDirectory ?? BrowserLaunchPage.directory(forCommand: command))
            } catch {
                lastError = error
                continue
            }
            let address =
                switch addressStyle {
                case .fileURL: page.fileURL.absoluteString
                case .windowsPath(let distribution):
                    WindowsSubsystem.windowsPath(of: page.fileURL.path, distribution: distribution)
                }
            let arguments = words.contains("%s") ? words.map { $0 == "%s" ? address : $0 } : words + [address]
            do {
                let pid = try Self.spawn(arguments, command: command)
                BlockingWork.detach(name: "PortalAuth.browser-reaper") {
                    var status: Int32 = 0
                    while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
                    let exited = status & 0x7f == 0
                    onExit(exited ? (status >> 8) & 0xff : 128 + (status & 0x7f))
                }
                return page
            } catch {
                page.remove()
                lastError = error
            }
        }
        throw lastError ?? BrowserError(command: commands.joined(separator: ":"), reason: "the command is empty")
    }

    // MARK: - Process start

    /// glibc's `POSIX_SPAWN_SETSID` (0x80), which Swift does not see because it needs `_GNU_SOURCE`.
    private static let spawnSetSID: Int16 = 0x80

    private static func spawn(_ arguments: [String], command: String) throws(BrowserError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // The browser outlives the command: nothing of its output may reach the terminal or stdout, now or later.
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0)
        // Only those three: libcurl's socketpair and sockets, the listener and the store lock are not close-on-exec.
        let closing = pa_spawn_addclosefrom(&actions, 3)
        guard closing == 0 else { throw BrowserError(command: command, reason: String(cString: strerror(closing))) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // No signal blocked and every signal at its default: the spawning thread (a pool thread, a Swift concurrency
        // thread) blocks most signals, and a shell-script launcher such as xdg-open that inherited a blocked SIGCHLD
        // would wait for its children forever.
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(
            &attributes, Self.spawnSetSID | Int16(POSIX_SPAWN_SETSIGMASK) | Int16(POSIX_SPAWN_SETSIGDEF))

        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, environ)
        guard result == 0 else { throw BrowserError(command: command, reason: String(cString: strerror(result))) }
        return pid
    }

    /// Splits a command line into words, honouring single and double quotes and backslashes.
    static func splitWords(_ line: String) -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false
        var quote: Character?
        var escaped = false
        for character in line {
            if escaped {
                current.append(character)
                escaped = false
            } else if character == "\\" && quote != "'" {
                escaped = true
                inWord = true
            } else if let open = quote {
                if character == open { quote = nil } else { current.append(character) }
            } else if character == "'" || character == "\"" {
                quote = character
                inWord = true
            } else if character.isWhitespace {
                if inWord { words.append(current) }
                current = ""
                inWord = false
            } else {
                current.append(character)
                inWord = true
            }
        }
        if inWord { words.append(current) }
        return words
    }
}
