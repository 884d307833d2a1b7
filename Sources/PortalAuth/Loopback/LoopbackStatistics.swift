/// What the serving loop counted during one wait: for debug logs and for tests that check the listener's bounds.
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
}
