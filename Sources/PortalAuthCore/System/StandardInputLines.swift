import Foundation
import Glibc
import Synchronization

/// Lines typed or pasted on standard input, read on a thread of their own so that waiting for a
/// line never blocks Swift's cooperative pool, and stopping as soon as the consuming task ends.
package enum StandardInputLines {
    /// The lines of standard input; the stream ends at end of input or when the consumer goes away.
    package static func stream(fileDescriptor: Int32 = 0) -> AsyncStream<String> {
        AsyncStream { continuation in
            let stopped = Mutex(false)
            continuation.onTermination = { _ in stopped.withLock { $0 = true } }
            BlockingWork.detach(name: "PortalAuth.stdin") {
                var pending: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 4096)
                while !stopped.withLock({ $0 }) {
                    var descriptor = pollfd(fd: fileDescriptor, events: Int16(POLLIN), revents: 0)
                    let ready = poll(&descriptor, 1, 200)
                    if ready < 0 && errno == EINTR { continue }
                    if ready <= 0 { continue }
                    let count = read(fileDescriptor, &buffer, buffer.count)
                    if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                    if count <= 0 { break }
                    pending += buffer[0..<count]
                    while let newline = pending.firstIndex(of: 10) {
                        continuation.yield(String(decoding: pending[..<newline], as: UTF8.self))
                        pending.removeSubrange(...newline)
                    }
                    if pending.count > 64 * 1024 { pending.removeAll() }
                }
                continuation.finish()
            }
        }
    }
}
