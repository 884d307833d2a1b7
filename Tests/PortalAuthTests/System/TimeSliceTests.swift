import Foundation
import Glibc
import Synchronization
import Testing

@testable import PortalAuthCore

/// `TimeSlice`: the short slice the agent's serving thread and `portal-auth token` ask for (EEVDF's custom slice,
/// Linux 6.12 and later), each test on a thread of its own so that the test process's threads keep theirs.
@Suite("A thread's time slice")
struct TimeSliceTests {
    /// Whether the running kernel takes a custom slice for SCHED_OTHER threads (6.12 and later).
    static var kernelTakesSlices: Bool {
        var names = utsname()
        uname(&names)
        let release = withUnsafeBytes(of: &names.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let numbers = release.split(whereSeparator: { !$0.isNumber }).prefix(2).compactMap { Int($0) }
        guard numbers.count == 2 else { return false }
        return (numbers[0], numbers[1]) >= (6, 12)
    }

    /// Runs `body` on a new thread and returns its result.
    static func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
        let result = Mutex<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            let value = body()
            result.withLock { $0 = value }
            done.signal()
        }
        thread.start()
        done.wait()
        return result.withLock { $0! }
    }

    @Test("a SCHED_OTHER thread gets the short slice it asks for; its nice value is kept")
    func shortSlice() {
        let (took, before, after, niceBefore, niceAfter) = Self.onOwnThread {
            errno = 0
            let niceBefore = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
            let before = TimeSlice.current
            let took = TimeSlice.requestShort()
            let after = TimeSlice.current
            let niceAfter = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
            return (took, before, after, niceBefore, niceAfter)
        }
        #expect(took == Self.kernelTakesSlices, "requestShort() on kernel \(Self.kernelTakesSlices ? "≥" : "<") 6.12")
        if took {
            #expect(before != TimeSlice.short, "the thread had the short slice already")
            #expect(after == TimeSlice.short)
        }
        #expect(niceBefore == niceAfter)
    }

    /// SCHED_BATCH (glibc declares it only under _GNU_SOURCE).
    static let batchPolicy: Int32 = 3

    @Test("a thread under another policy (SCHED_BATCH, as a batch job runs) is left as it is")
    func otherPolicyKept() {
        let (took, policy) = Self.onOwnThread { () -> (Bool, Int32) in
            var parameters = sched_param(sched_priority: 0)
            guard sched_setscheduler(0, Self.batchPolicy, &parameters) == 0 else { return (true, -1) }
            return (TimeSlice.requestShort(), sched_getscheduler(0))
        }
        #expect(!took, "a short slice was set on a SCHED_BATCH thread")
        #expect(policy == Self.batchPolicy, "the thread's policy changed")
    }
}
