import Foundation
import Glibc
import PortalAuthTesting
import Synchronization
import Testing

@testable import PortalAuth
@testable import PortalAuthCore

/// The forwarding socket's rules with an injected clock and confirmer: a "yes" remembered per sign-in and remote for
/// its window only, no answer in time is no, a prompt that cannot be shown is no; how the remote is named from the
/// `ssh` client's command line; marks that follow a sign-in's name; `stop` refused and `status` reduced there.
@Suite("Agent forwarding: marks, confirmation and the forwarding socket", .timeLimit(.minutes(1)))
struct AgentForwardPolicyTests {
    static let remote = AgentRemote(description: "ssh alice@build.example.com")

    /// A confirmer that answers `answer` and counts its prompts.
    final class Counting: Sendable {
        let prompts = Mutex<[String]>([])
        let answer: AgentConfirmation

        init(_ answer: AgentConfirmation) { self.answer = answer }

        var confirmer: AgentConfirmer {
            { prompt in
                self.prompts.withLock { $0.append(prompt) }
                return self.answer
            }
        }

        var count: Int { prompts.withLock { $0.count } }
    }

    @Test("a yes holds for its sign-in and remote during the window only; another sign-in or remote is asked")
    func rememberedWindow() async throws {
        // Sleeps block: the prompt's time never runs out while the confirmer answers.
        let clock = ManualClock(blocksSleeps: true)
        let yes = Counting(.yes)
        let policy = AgentForwardPolicy(
            confirms: true, timeout: .seconds(30), remember: .seconds(600), clock: clock, confirmer: yes.confirmer)
        try await policy.authorize(signIn: "work", target: "the portal https://gis.example.com", remote: Self.remote)
        #expect(yes.count == 1)
        #expect(yes.prompts.withLock { $0[0] }.contains("allow ssh alice@build.example.com"))
        #expect(yes.prompts.withLock { $0[0] }.contains("the sign-in work (the portal https://gis.example.com)"))
        clock.advance(by: .seconds(599))
        try await policy.authorize(signIn: "work", target: "t", remote: Self.remote)
        #expect(yes.count == 1, "remembered within the window")
        try await policy.authorize(signIn: "home", target: "t", remote: Self.remote)
        try await policy.authorize(signIn: "work", target: "t", remote: AgentRemote(description: "ssh other"))
        #expect(yes.count == 3, "each sign-in and remote is asked")
        clock.advance(by: .seconds(2))
        try await policy.authorize(signIn: "work", target: "t", remote: Self.remote)
        #expect(yes.count == 4, "asked again once the window is over")
        #expect(policy.counts.allowed == 5)

        let everyTime = Counting(.yes)
        let asking = AgentForwardPolicy(
            confirms: true, remember: .zero, clock: clock, confirmer: everyTime.confirmer)
        for _ in 0..<2 { try await asking.authorize(signIn: "work", target: "t", remote: Self.remote) }
        #expect(everyTime.count == 2, "--confirm-remember 0 asks every time")
    }

    @Test(
        "no, no answer in time, and no way to ask are each a refusal (forbidden) that says why; nothing is remembered")
    func refusals() async throws {
        let clock = ManualClock(blocksSleeps: true)
        let no = Counting(.no)
        let policy = AgentForwardPolicy(confirms: true, clock: clock, confirmer: no.confirmer)
        for _ in 0..<2 {
            let error = await #expect(throws: AgentFailure.self) {
                try await policy.authorize(signIn: "work", target: "t", remote: Self.remote)
            }
            #expect(error?.reason == .forbidden)
            #expect(
                error?.message.contains("did not allow ssh alice@build.example.com") == true,
                "\(String(describing: error))")
        }
        #expect(no.count == 2, "a no is not remembered")
        #expect(policy.counts.refusedNotConfirmed == 2)

        let unavailable = AgentForwardPolicy(
            confirms: true, clock: clock, confirmer: AgentConfirmers.none("no confirmation program is set"))
        let error = await #expect(throws: AgentFailure.self) {
            try await unavailable.authorize(signIn: "work", target: "t", remote: Self.remote)
        }
        #expect(error?.message.contains("needs a confirmation") == true)
        #expect(error?.message.contains("no confirmation program is set") == true)
    }

    @Test("a confirmer that does not answer is cancelled when the clock reaches the timeout, and the answer is no")
    func promptTimeout() async throws {
        // Sleeps return at once (moving the clock): the timeout is reached before the confirmer answers.
        let clock = ManualClock()
        let cancelled = Mutex(false)
        let policy = AgentForwardPolicy(confirms: true, timeout: .seconds(30), clock: clock) { _ in
            do {
                try await Task.sleep(for: .seconds(86_400))
            } catch {
                cancelled.withLock { $0 = true }
            }
            return .yes
        }
        let error = await #expect(throws: AgentFailure.self) {
            try await policy.authorize(signIn: "work", target: "t", remote: Self.remote)
        }
        #expect(error?.message.contains("no answer came within 30 seconds") == true, "\(String(describing: error))")
        #expect(clock.sleeps == [.seconds(30)])
        #expect(cancelled.withLock { $0 }, "the prompt was cancelled")
    }

    @Test("requests for the same sign-in and remote at once share one prompt; --no-confirm asks nothing")
    func onePromptAtOnce() async throws {
        let clock = ManualClock(blocksSleeps: true)
        let released = Mutex(false)
        let prompts = Mutex(0)
        let policy = AgentForwardPolicy(confirms: true, clock: clock) { _ in
            prompts.withLock { $0 += 1 }
            while !released.withLock({ $0 }) { await Task.yield() }
            return .yes
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<5 {
                group.addTask { try await policy.authorize(signIn: "work", target: "t", remote: Self.remote) }
            }
            while prompts.withLock({ $0 }) == 0 { await Task.yield() }
            // Every prompt waiting ends (a second prompt would be counted, not left hanging).
            released.withLock { $0 = true }
            try await group.waitForAll()
        }
        #expect(prompts.withLock { $0 } == 1)

        let never = Counting(.no)
        let open = AgentForwardPolicy(confirms: false, clock: clock, confirmer: never.confirmer)
        try await open.authorize(signIn: "work", target: "t", remote: Self.remote)
        #expect(never.count == 0)
    }

    // MARK: - The remote

    @Test(
        "the remote is the ssh client's destination, options and their values skipped",
        arguments: [
            (
                ["ssh", "-R", "/r.sock:/l.sock", "alice@build.example.com", "portal-auth", "token"],
                "ssh alice@build.example.com"
            ),
            (["/usr/bin/ssh", "-p", "2222", "-oStreamLocalBindUnlink=yes", "-46", "host"], "ssh host"),
            (["ssh", "-l", "bob", "-NT", "-i", "key", "--", "h.example"], "ssh h.example"),
            (["ssh", "-pR"], "process ssh"),
            (["socat", "UNIX-CONNECT:/x"], "process socat"),
            (["ssh", "evil\u{1b}[2Jhost"], "ssh evil\\u{1B}[2Jhost"),
        ])
    func remoteName(_ arguments: [String], _ expected: String) {
        #expect(AgentRemote.of(pid: 42, commandLine: { _ in arguments }).description == expected)
        #expect(AgentRemote.of(pid: 42, commandLine: { _ in nil }).description == "an unknown process (pid 42)")
    }

    @Test("a mark follows its sign-in: a name moved to another sign-in or removed is no longer marked")
    func marksFollowNames() throws {
        let marks = AgentForwardMarks(names: ["work": "key-1"])
        #expect(marks.markedName(of: "key-1", names: ["work": "key-1"]) == "work")
        #expect(marks.markedName(of: "key-1", names: ["work": "key-2"]) == nil)
        #expect(marks.markedName(of: "key-1", names: [:]) == nil)
        #expect(marks.markedName(of: "key-2", names: ["work": "key-2"]) == nil)

        let folder = try TemporaryDirectory()
        let store = "\(folder.path)/credentials.json"
        try marks.save(forStore: store)
        let path = AgentForwardMarks.path(forStore: store)
        #expect(path == "\(folder.path)/credentials.forwarding.json")
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(try AgentForwardMarks.load(forStore: store) == marks)
        try Data("[]".utf8).write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: AgentFailure.self) { try AgentForwardMarks.load(forStore: store) }
        #expect(error?.message.contains(path) == true)
    }

    // MARK: - The confirmation command

    @Test(
        "the confirmation command gets the prompt as its argument and no PORTAL_AUTH_ variable; 0 is yes; missing is no"
    )
    func confirmationCommand() async throws {
        let folder = try TemporaryDirectory()
        let script = "\(folder.path)/confirm"
        try Data(
            "#!/bin/sh\nprintf '%s\\n' \"$1\" > \"\(folder.path)/prompt\"\nenv > \"\(folder.path)/env\"\nexit ${ANSWER:-3}\n"
                .utf8
        )
        .write(to: URL(fileURLWithPath: script))
        chmod(script, 0o700)
        let environment = ["PATH": "/usr/bin:/bin", "PORTAL_AUTH_CLIENT_SECRET": "s3cret", "HOME": "/nowhere"]
        #expect(await AgentConfirmers.command(script, environment: environment)("allow x?") == .no, "ANSWER unset")
        #expect(try String(contentsOfFile: "\(folder.path)/prompt", encoding: .utf8) == "allow x?\n")
        let seen = try String(contentsOfFile: "\(folder.path)/env", encoding: .utf8)
        #expect(!seen.contains("PORTAL_AUTH") && !seen.contains("s3cret"))
        #expect(seen.contains("HOME=/nowhere"))
        try Data("#!/bin/sh\nexit 0\n".utf8).write(to: URL(fileURLWithPath: script))
        #expect(await AgentConfirmers.command(script, environment: environment)("allow x?") == .yes)
        guard case .unavailable(let why) = await AgentConfirmers.command("\(folder.path)/missing")("allow x?") else {
            Issue.record("a missing command answered")
            return
        }
        #expect(why.contains("\(folder.path)/missing") && why.contains("is not an executable file"))
    }

    // MARK: - The forwarding socket

    @Test("on the forwarding socket, stop is refused (the agent goes on) and status says only the protocol and version")
    func forwardingSocketRole() async throws {
        let folder = try TemporaryDirectory()
        let listener = try AgentSocket.listen(at: "\(folder.path)/run/agent-forward.sock")
        let server = try AgentServer(
            listener: listener.descriptor, role: .forward, details: ["version": .string("9.9")]
        ) { _, _ in .failure(AgentPolicyStub.refused) }
        let task = Task { try await server.run() }
        defer {
            server.stop()
            listener.close()
        }
        let path = listener.path
        let stop = try await BlockingWork.run { try AgentSocket.ask(.stop, at: path, timeout: .seconds(20)) }
        #expect(stop == .failure(AgentServer.stopForwarded))
        guard
            case .status(let status) = try await BlockingWork.run({
                try AgentSocket.ask(.status, at: path, timeout: .seconds(20))
            })
        else {
            Issue.record("no status after a refused stop")
            return
        }
        #expect(status == ["version": .string("9.9"), "protocol": .integer(1), "forwarding": .bool(true)])
        server.stop()
        _ = try? await task.value
    }

    enum AgentPolicyStub {
        static let refused = AgentFailure(.forbidden, "stub")
    }
}
