import Glibc
import Synchronization
import Testing

@testable import PortalAuth
@testable import PortalAuthCore

/// Signals turned into calls without Dispatch (issue 17). The tests change process-wide signal actions, so they
/// run one at a time and only with SIGUSR1/SIGUSR2, which nothing else in the test process uses.
@Suite(
    "Signals are forwarded to handlers through a pipe, and the previous actions come back", .serialized,
    .timeLimit(.minutes(1)))
struct SignalForwarderTests {
    /// The signals a handler received, in order.
    final class Received: Sendable {
        let numbers = Mutex<[Int32]>([])
        func add(_ number: Int32) { numbers.withLock { $0.append(number) } }
        var all: [Int32] { numbers.withLock { $0 } }
    }

    /// Waits until `condition` holds (the reader thread calls handlers soon after the signal).
    private func eventually(_ condition: () -> Bool) async throws {
        while !condition() { try await Task.sleep(for: .milliseconds(2)) }
    }

    /// Sends `number` to the process, as a terminal or `kill` does (`raise` would target the calling thread,
    /// which, being one of the pool's, blocks most signals).
    private func signalProcess(_ number: Int32) { kill(getpid(), number) }

    /// Whether the current action of `number` is `SIG_DFL` / `SIG_IGN` (asked by setting it and putting it back).
    private func action(of number: Int32) -> String {
        let current = signal(number, SIG_DFL)
        signal(number, current)
        let raw = current.map { unsafeBitCast($0, to: Int.self) } ?? 0
        if raw == unsafeBitCast(SIG_IGN, to: Int.self) { return "ignore" }
        return raw == 0 ? "default" : "handler"
    }

    @Test("a forwarded signal calls the handler with its number, once per signal, on another thread")
    func forwards() async throws {
        signal(SIGUSR1, SIG_DFL)
        let received = Received()
        let caller = pthread_self()
        let onOtherThread = Mutex(true)
        let forwarder = try SignalForwarder(forwarding: [SIGUSR1], ignoring: []) { number in
            if pthread_equal(pthread_self(), caller) != 0 { onOtherThread.withLock { $0 = false } }
            received.add(number)
        }
        #expect(action(of: SIGUSR1) == "handler")
        signalProcess(SIGUSR1)
        try await eventually { received.all.count == 1 }
        signalProcess(SIGUSR1)
        try await eventually { received.all.count == 2 }
        #expect(received.all == [SIGUSR1, SIGUSR1])
        #expect(onOtherThread.withLock { $0 })
        withExtendedLifetime(forwarder) {}
    }

    @Test("when the last forwarder goes, the actions from before are back; ignored signals are ignored meanwhile")
    func restores() throws {
        signal(SIGUSR1, SIG_DFL)
        signal(SIGUSR2, SIG_DFL)
        do {
            let forwarder = try SignalForwarder(forwarding: [SIGUSR1], ignoring: [SIGUSR2]) { _ in }
            #expect(action(of: SIGUSR1) == "handler")
            #expect(action(of: SIGUSR2) == "ignore")
            withExtendedLifetime(forwarder) {}
        }
        #expect(action(of: SIGUSR1) == "default")
        #expect(action(of: SIGUSR2) == "default")
    }

    @Test("a signal ignored before (nohup) stays ignored and calls nothing")
    func keepsIgnored() async throws {
        signal(SIGUSR2, SIG_IGN)
        defer { signal(SIGUSR2, SIG_DFL) }
        let received = Received()
        let forwarder = try SignalForwarder(forwarding: [SIGUSR1, SIGUSR2], ignoring: []) { received.add($0) }
        #expect(action(of: SIGUSR2) == "ignore")
        signalProcess(SIGUSR2)
        signalProcess(SIGUSR1)
        try await eventually { !received.all.isEmpty }
        // Had SIGUSR2 been forwarded, it would be there by the time SIGUSR1, sent after it, has arrived.
        #expect(received.all == [SIGUSR1])
        withExtendedLifetime(forwarder) {}
        #expect(action(of: SIGUSR2) == "ignore")
    }

    @Test("nested forwarders are all called; the actions come back only when the outer one goes")
    func nested() async throws {
        signal(SIGUSR1, SIG_DFL)
        let outer = Received()
        let inner = Received()
        var outerForwarder: SignalForwarder? = try SignalForwarder(forwarding: [SIGUSR1], ignoring: []) {
            outer.add($0)
        }
        do {
            let innerForwarder = try SignalForwarder(forwarding: [SIGUSR1], ignoring: []) { inner.add($0) }
            signalProcess(SIGUSR1)
            try await eventually { outer.all.count == 1 && inner.all.count == 1 }
            withExtendedLifetime(innerForwarder) {}
        }
        #expect(action(of: SIGUSR1) == "handler")
        signalProcess(SIGUSR1)
        try await eventually { outer.all.count == 2 }
        #expect(inner.all.count == 1)
        withExtendedLifetime(outerForwarder) {}
        outerForwarder = nil
        #expect(action(of: SIGUSR1) == "default")
    }
}
