import Dispatch
import Glibc

/// Turns Ctrl-C (SIGINT) and SIGTERM into a call, so a running sign-in can be cancelled and
/// its loopback port freed before the tool exits with status 130.
final class InterruptWatcher {
    private let sources: [any DispatchSourceSignal]

    /// Starts watching; `handler` runs once per signal on a background queue.
    init(_ handler: @escaping @Sendable () -> Void) {
        sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler(handler: handler)
            source.resume()
            return source
        }
    }

    deinit {
        sources.forEach { $0.cancel() }
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }
}
