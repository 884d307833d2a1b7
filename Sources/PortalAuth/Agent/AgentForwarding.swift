import Foundation
import Glibc
import PortalAuthCore
import PortalAuthStore
import Synchronization

/// The sign-ins the user marked for forwarding (`portal-auth agent forward allow NAME`): a mark names a sign-in by
/// its name (`portal-auth name`) and holds the store key the name pointed at when marked, so a name moved to
/// another sign-in, or a sign-in removed and made again, is no longer marked.
///
/// Kept beside the store file, in `<store>.forwarding.json` (0600, written atomically): never a token.
package struct AgentForwardMarks: Sendable, Equatable {
    /// Marked names: name → store key.
    package var names: [String: String] = [:]

    package init(names: [String: String] = [:]) { self.names = names }

    /// The marked name of the sign-in with `key` whose name still points at it (`names`: the preferences' names),
    /// or nil when it is not marked.
    package func markedName(of key: String, names current: [String: String]) -> String? {
        names.filter { $0.value == key && current[$0.key] == key }.keys.sorted().first
    }

    /// The marks file for the store file at `storePath`: `credentials.json` → `credentials.forwarding.json`.
    package static func path(forStore storePath: String) -> String {
        // Beside the preferences file, named as it is.
        String(SignInPreferences.path(forStore: storePath).dropLast(".preferences.json".count)) + ".forwarding.json"
    }

    /// The marks kept for the store at `storePath`; none when there is no file.
    ///
    /// - Throws: `AgentFailure` (`invalid_content`) naming the file when it is not a marks document.
    package static func load(forStore storePath: String) throws(AgentFailure) -> AgentForwardMarks {
        let path = path(forStore: storePath)
        guard let data = FileManager.default.contents(atPath: path) else { return AgentForwardMarks() }
        guard let object = (try? JSONValue.parse(data))?.objectValue, let names = object["forward"]?.objectValue
        else {
            throw AgentFailure(
                .invalidContent,
                "\(DisplayText.path(path)) is not a list of sign-ins marked for forwarding; remove it and mark them again with `portal-auth agent forward allow NAME`"
            )
        }
        var marks = AgentForwardMarks()
        for (name, key) in names.members {
            if let key = key.stringValue, SignInPreferences.isValidName(name) { marks.names[name] = key }
        }
        return marks
    }

    /// Writes the marks for the store at `storePath` (atomically, 0600).
    package func save(forStore storePath: String) throws(CredentialStoreError) {
        let sorted = names.sorted { $0.key < $1.key }.map { (key: $0.key, value: JSONValue.string($0.value)) }
        let object = JSONValue.object(JSONObject([("forward", .object(JSONObject(sorted)))]))
        try StoreFileSystem.ensurePrivateDirectory(StoreFileSystem.parentDirectory(of: storePath))
        try AtomicFileWriter.write(
            Data((object.serialized(indent: 2) + "\n").utf8), to: Self.path(forStore: storePath))
    }
}

/// Who is asking on the forwarding socket: the peer of a forwarded connection is the local `ssh` client process
/// that carries it, whose command line names the remote machine.
package struct AgentRemote: Sendable, Hashable {
    /// What a person is shown and what a remembered "yes" is kept for: `ssh user@host`, or `process NAME` when the
    /// peer is not an `ssh` client (control characters neutralised, length bounded).
    package let description: String

    package init(description: String) { self.description = description }

    /// The remote of the connection whose peer is process `pid`.
    package static func of(
        pid: Int32, commandLine: (Int32) -> [String]? = { AgentRemote.commandLine(of: $0) }
    ) -> AgentRemote {
        guard let arguments = commandLine(pid), let program = arguments.first else {
            return AgentRemote(description: "an unknown process (pid \(pid))")
        }
        let name = (program as NSString).lastPathComponent
        guard name == "ssh", let destination = sshDestination(Array(arguments.dropFirst())) else {
            return AgentRemote(description: "process \(DisplayText.neutralised(name, limit: 60))")
        }
        return AgentRemote(description: "ssh \(DisplayText.neutralised(destination, limit: 200))")
    }

    /// The destination of an `ssh` command line (its first argument that is neither an option nor an option's
    /// value, as ssh(1) reads it), or nil.
    package static func sshDestination(_ arguments: [String]) -> String? {
        // ssh(1)'s options that take a value.
        let withValue = Set("BbcDEeFIiJLlmOoPpQRSWw")
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" { return index < arguments.count ? arguments[index] : nil }
            guard argument.hasPrefix("-"), argument.count > 1 else { return argument }
            // -46AaCf…: letters run together; one that takes a value ends the word (its value is the rest or next).
            for (offset, letter) in argument.dropFirst().enumerated() where withValue.contains(letter) {
                if offset == argument.count - 2 { index += 1 }
                break
            }
        }
        return nil
    }

    /// `/proc/PID/cmdline`, split at its NULs; nil when unreadable.
    package static func commandLine(of pid: Int32) -> [String]? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"), !data.isEmpty else {
            return nil
        }
        return data.split(separator: 0, omittingEmptySubsequences: false).dropLast().map {
            String(decoding: $0, as: UTF8.self)
        }
    }
}

/// A person's answer to a forwarding prompt.
package enum AgentConfirmation: Sendable, Equatable {
    case yes
    case no
    /// No prompt could be shown: why (a confirmation command that cannot be run, no terminal).
    case unavailable(String)
}

/// Asks a person whether a forwarded request may have a token: given the prompt text, answers; cancelled when the
/// wait is over.
package typealias AgentConfirmer = @Sendable (String) async -> AgentConfirmation

/// The rules of the forwarding socket, past the mark (which the caller checks against the store): unless turned off,
/// a confirmation per sign-in and remote, asked through `confirmer`, that must come within `timeout`; a "yes" is
/// remembered for that sign-in and remote for `remember`. Prompts for the same sign-in and remote at once are one.
package final class AgentForwardPolicy: Sendable {
    /// What `status` reports of the forwarding socket.
    package struct Counts: Sendable, Equatable {
        /// Requests let through (marked, and confirmed or remembered or not asked).
        package var allowed = 0
        package var refusedNotMarked = 0
        package var refusedNotConfirmed = 0
    }

    private struct Key: Hashable {
        let signIn: String
        let remote: AgentRemote
    }

    private struct State {
        var remembered: [Key: Date] = [:]
        var asking: [Key: Task<AgentConfirmation, Never>] = [:]
        var counts = Counts()
    }

    /// Whether each sign-in and remote must be confirmed.
    package let confirms: Bool
    /// How long a confirmation may take; no answer by then is no.
    package let timeout: Duration
    /// How long a "yes" holds for its sign-in and remote (zero: ask every time).
    package let remember: Duration
    private let confirmer: AgentConfirmer
    private let clock: any SignInClock
    private let state = Mutex(State())

    package init(
        confirms: Bool, timeout: Duration = .seconds(30), remember: Duration = .seconds(600),
        clock: any SignInClock = SystemSignInClock(), confirmer: @escaping AgentConfirmer
    ) {
        self.confirms = confirms
        self.timeout = timeout
        self.remember = remember
        self.clock = clock
        self.confirmer = confirmer
    }

    /// The counts so far.
    package var counts: Counts { state.withLock { $0.counts } }

    /// The refusal of a request for a sign-in not marked for forwarding (the same whether or not it is stored, so
    /// the remote learns nothing of the sign-ins the agent holds).
    package func refuseUnmarked() -> AgentFailure {
        state.withLock { $0.counts.refusedNotMarked += 1 }
        return Self.notMarked
    }

    package static let notMarked = AgentFailure(
        .forbidden,
        "no sign-in marked for forwarding matches this request; on the agent's machine, mark one with `portal-auth agent forward allow NAME` (see `portal-auth agent forward list`)"
    )

    /// Whether `remote` may have a token of the marked sign-in `signIn` (`target` describes it in the prompt).
    ///
    /// - Throws: `AgentFailure` (`forbidden`) when the person said no, did not answer in time, or could not be asked.
    package func authorize(signIn: String, target: String, remote: AgentRemote) async throws(AgentFailure) {
        guard confirms else { return allowed() }
        let key = Key(signIn: signIn, remote: remote)
        let now = clock.now
        let (remembered, task): (Bool, Task<AgentConfirmation, Never>) = state.withLock { state in
            if let until = state.remembered[key], until > now { return (true, Task { .yes }) }
            state.remembered[key] = nil
            if let asking = state.asking[key] { return (false, asking) }
            let prompt =
                "portal-auth agent: allow \(remote.description) to have a token of the sign-in \(signIn) (\(DisplayText.neutralised(target, limit: 200)))?"
            let (confirmer, clock, timeout) = (self.confirmer, self.clock, self.timeout)
            let asking = Task {
                await withTaskGroup(of: AgentConfirmation?.self) { group in
                    group.addTask { await confirmer(prompt) }
                    group.addTask {
                        try? await clock.sleep(for: timeout)
                        return nil
                    }
                    let first = await group.next() ?? nil
                    group.cancelAll()
                    return first ?? .unavailable("no answer came within \(timeout.components.seconds) seconds")
                }
            }
            state.asking[key] = asking
            return (false, asking)
        }
        if remembered { return allowed() }
        let answer = await task.value
        let later = clock.now
        let seconds = remember.components.seconds
        state.withLock { state in
            if state.asking[key] == task { state.asking[key] = nil }
            if answer == .yes && remember > .zero {
                state.remembered[key] = later.addingTimeInterval(TimeInterval(seconds))
            }
        }
        switch answer {
        case .yes: return allowed()
        case .no:
            state.withLock { $0.counts.refusedNotConfirmed += 1 }
            throw AgentFailure(
                .forbidden, "the agent's user did not allow \(remote.description) a token of the sign-in \(signIn)")
        case .unavailable(let why):
            state.withLock { $0.counts.refusedNotConfirmed += 1 }
            throw AgentFailure(
                .forbidden,
                "forwarding a token of the sign-in \(signIn) needs a confirmation on the agent's machine, and none was given: \(why)"
            )
        }
    }

    private func allowed() {
        state.withLock { $0.counts.allowed += 1 }
    }
}
