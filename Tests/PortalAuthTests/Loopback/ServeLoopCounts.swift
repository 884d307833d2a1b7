import Logging
import Synchronization
import Testing
@testable import PortalAuth

/// The counts a listener's serving loop logs when its wait ends (the "loopback listener finished" debug event), read
/// back from the log: what tests of the listener's bounds check, through the same event a user's debug log shows.
final class ServeLoopCounts: Sendable {
    private let finished = Mutex<[Logger.Metadata]>([])

    /// A logger for `LoopbackListener(…, logger:)` that hands the finished event to this object.
    var logger: Logger {
        Logger(label: "test") { _ in Handler(counts: self) }
    }

    /// The counts of the one wait that ended; fails the test when none or more than one was logged, or a count is
    /// missing.
    func statistics(sourceLocation: SourceLocation = #_sourceLocation) throws -> LoopbackStatistics {
        let events = finished.withLock { $0 }
        try #require(
            events.count == 1, "one \"loopback listener finished\" event, not \(events.count)",
            sourceLocation: sourceLocation)
        let metadata = events[0]
        func count(_ key: String) throws -> Int {
            try #require(
                metadata[key].flatMap { Int($0.description) }, "the count \(key)", sourceLocation: sourceLocation)
        }
        return LoopbackStatistics(
            accepted: try count(LoopbackStatistics.acceptedKey),
            evicted: try count(LoopbackStatistics.evictedKey),
            rescuedFromEviction: try count(LoopbackStatistics.rescuedFromEvictionKey),
            timedOut: try count(LoopbackStatistics.timedOutKey),
            answered: try count(LoopbackStatistics.answeredKey),
            peakConnections: try count(LoopbackStatistics.peakConnectionsKey),
            peakHeadBytes: try count(LoopbackStatistics.peakHeadBytesKey)
        )
    }

    private func record(_ metadata: Logger.Metadata) { finished.withLock { $0.append(metadata) } }

    /// Passes the finished event's metadata on; drops every other event.
    private struct Handler: LogHandler {
        let counts: ServeLoopCounts
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .debug

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            guard event.message.description == "loopback listener finished" else { return }
            counts.record(event.metadata ?? [:])
        }
    }
}
