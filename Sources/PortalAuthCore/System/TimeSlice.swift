internal import CPortalAuthSystem
import Glibc

/// The length of the calling thread's turns on a processor, for a thread that answers others and waits in between.
///
/// With Linux's EEVDF scheduler (6.12 and later) a thread that wakes up runs at once only when its slice is shorter
/// than the running thread's; otherwise it waits for that slice to end (1.4 ms on the bench machine), and on a busy
/// machine for other threads' slices too. A thread that asks for a short slice (`sched_setattr(2)`'s custom slice,
/// which an unprivileged thread may set, and which changes no thread's share of the processor) runs when it wakes:
/// the agent's serving thread when a request arrives, and `portal-auth token` when the agent's answer arrives. Its
/// policy and nice value are kept; a thread under another policy than `SCHED_OTHER` (an `SCHED_IDLE` or
/// `SCHED_BATCH` job) is left as it is. Threads and processes it starts later inherit the slice.
package enum TimeSlice {
    /// The slice asked for: the shortest the kernel takes (0.1 ms).
    package static let short: UInt64 = 100_000

    /// Asks for ``short`` for the calling thread; whether the kernel took it (an older kernel refuses or ignores
    /// it, which leaves the thread as it was).
    @discardableResult
    package static func requestShort() -> Bool {
        pa_request_time_slice(short) == 0
    }

    /// The calling thread's slice in nanoseconds, as the scheduler reports it (`sched_getattr(2)`); nil when the
    /// call fails.
    package static var current: UInt64? {
        var attributes = pa_sched_attr()
        let size = UInt32(MemoryLayout<pa_sched_attr>.size)
        return pa_get_sched_attr(&attributes, size) == 0 ? attributes.runtime : nil
    }
}
