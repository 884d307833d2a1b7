import Foundation
import Glibc
import PortalAuthCore
import Synchronization

/// The ways the agent asks its user to confirm a forwarded request.
package enum AgentConfirmers {
    /// The variables a confirmation command gets (what a dialog needs to show itself, and no more: never a
    /// `PORTAL_AUTH_` variable, never a secret).
    package static let keptVariables =
        ("PATH HOME USER LOGNAME LANG LANGUAGE LC_ALL LC_MESSAGES LC_CTYPE TERM DISPLAY WAYLAND_DISPLAY XAUTHORITY "
        + "XDG_RUNTIME_DIR DBUS_SESSION_BUS_ADDRESS").split(separator: " ").map(String.init)

    /// The environment of a confirmation command: `keptVariables` of `environment`.
    package static func commandEnvironment(_ environment: [String: String]) -> [String: String] {
        environment.filter { keptVariables.contains($0.key) }
    }

    /// Runs `command` (a path, or a name looked up in `PATH`) with the prompt as its only argument, askpass-style:
    /// exit status 0 is yes, anything else no; a command that cannot be run is `unavailable`. Its input and output
    /// are /dev/null; it is killed when the wait is cancelled (the prompt's time is over).
    package static func command(
        _ command: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> AgentConfirmer {
        let kept = commandEnvironment(environment)
        return { prompt in
            guard let path = resolve(command, path: environment["PATH"]) else {
                return .unavailable(
                    "the confirmation command\(MessagePart.given(" ", DisplayText.path(command))) is not an executable file; "
                        + "the agent's user must name an executable program as the confirmation command"
                )
            }
            let child = ChildProcess()
            child.executableURL = URL(fileURLWithPath: path)
            child.arguments = [prompt]
            child.environment = kept
            child.standardInput = nil
            child.standardOutput = nil
            child.standardError = nil
            do {
                try child.run()
            } catch {
                return .unavailable("the confirmation command \(DisplayText.path(path)) cannot be run: \(error)")
            }
            await withTaskCancellationHandler {
                _ = try? await BlockingWork.runIgnoringCancellation { child.waitUntilExit() }
            } onCancel: {
                // SIGKILL: a child may inherit a thread's blocked SIGTERM (the agent's signal watching).
                let pid = child.processIdentifier
                if pid > 0 { kill(pid, SIGKILL) }
            }
            if Task.isCancelled { return .no }
            return child.terminationReason == .exit && child.terminationStatus == 0 ? .yes : .no
        }
    }

    /// The executable `command` names: itself when it holds a `/`, else the first in `path`'s folders.
    static func resolve(_ command: String, path: String?) -> String? {
        if command.contains("/") { return access(command, X_OK) == 0 ? command : nil }
        for folder in (path ?? "/usr/bin:/bin").split(separator: ":") where folder.hasPrefix("/") {
            let candidate = "\(folder)/\(command)"
            var info = stat()
            if stat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFREG, access(candidate, X_OK) == 0 {
                return candidate
            }
        }
        return nil
    }

    /// Asks on the terminal `input`/`output` (the agent's): the prompt, then `[y/N]`; "y" or "yes" is yes. One prompt
    /// at a time; cancelled (the time is over), it says so on the terminal and answers no.
    package static func terminal(input: Int32 = STDIN_FILENO, output: Int32 = STDERR_FILENO) -> AgentConfirmer {
        let turn = TerminalTurn()
        return { prompt in
            await turn.ask(prompt, input: input, output: output)
        }
    }

    /// Serialises terminal prompts.
    private actor TerminalTurn {
        func ask(_ prompt: String, input: Int32, output: Int32) async -> AgentConfirmation {
            let cancelled = Mutex(false)
            let answer: String? = await withTaskCancellationHandler {
                (try? await BlockingWork.runIgnoringCancellation {
                    write(output, "\(prompt) [y/N] ")
                    var line: [UInt8] = []
                    var byte: UInt8 = 0
                    while !cancelled.withLock({ $0 }) {
                        var descriptor = pollfd(fd: input, events: Int16(POLLIN), revents: 0)
                        guard poll(&descriptor, 1, 200) > 0 else { continue }
                        guard read(input, &byte, 1) == 1 else { return String?.none }
                        if byte == 10 { return String(decoding: line, as: UTF8.self) }
                        if line.count < 64 { line.append(byte) }
                    }
                    write(output, "\n(no answer in time: refused)\n")
                    return nil
                }) ?? nil
            } onCancel: {
                cancelled.withLock { $0 = true }
            }
            guard let answer else { return .no }
            return ["y", "yes"].contains(answer.trimmingCharacters(in: .whitespaces).lowercased()) ? .yes : .no
        }
    }

    private static func write(_ fd: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    }

    /// Answers `unavailable(reason)`: the agent has no way to ask.
    package static func none(_ reason: String) -> AgentConfirmer {
        { _ in .unavailable(reason) }
    }
}
