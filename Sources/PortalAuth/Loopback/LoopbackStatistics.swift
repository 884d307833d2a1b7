import Logging

/// What the serving loop counted during one wait, logged at debug level when the wait ends ("loopback listener
/// finished"): how hard the listener was pressed (a flood of connections, a client that never finished its request).
struct LoopbackStatistics: Sendable, Equatable {
    /// Connections accepted.
    var accepted = 0
    /// Connections closed to make room under the connection cap.
    var evicted = 0
    /// Connections chosen to make room that had a request waiting, read and answered instead of closed.
    var rescuedFromEviction = 0
    /// Connections closed because their time ran out.
    var timedOut = 0
    /// Requests answered (any status).
    var answered = 0
    /// The most connections open at once.
    var peakConnections = 0
    /// The most head bytes buffered for one connection.
    var peakHeadBytes = 0

    /// The counts as the metadata of the debug event, by these names.
    var logMetadata: Logger.Metadata {
        [
            Self.acceptedKey: "\(accepted)", Self.evictedKey: "\(evicted)",
            Self.rescuedFromEvictionKey: "\(rescuedFromEviction)", Self.timedOutKey: "\(timedOut)",
            Self.answeredKey: "\(answered)", Self.peakConnectionsKey: "\(peakConnections)",
            Self.peakHeadBytesKey: "\(peakHeadBytes)",
        ]
    }

    static let acceptedKey = "accepted"
    static let evictedKey = "evicted"
    static let rescuedFromEvictionKey = "rescued_from_eviction"
    static let timedOutKey = "timed_out"
    static let answeredKey = "answered"
    static let peakConnectionsKey = "peak_connections"
    static let peakHeadBytesKey = "peak_head_bytes"
}
