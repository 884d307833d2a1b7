import Glibc

/// One client connection of the serving loop: what it has sent so far, what it is owed, and when its time ends.
struct LoopbackConnection {
    /// Where the connection is in its short life.
    enum Stage: Equatable {
        /// Receiving the request head.
        case reading
        /// Sending the response.
        case writing
        /// Response sent and our side shut down; reading and discarding what the client still sends, so that
        /// closing does not reset the connection before the client has read the response.
        case draining
    }

    /// The socket; -1 once closed (the entry is removed after the current pass).
    var fd: Int32
    /// When the connection was accepted (the oldest idle one makes room first).
    let acceptedAt: ContinuousClock.Instant
    /// When the connection is closed whatever its stage.
    var deadline: ContinuousClock.Instant
    var stage = Stage.reading
    /// The head bytes received so far (never more than the configured limit).
    var head: [UInt8] = []
    /// Where the search for the end of the head resumes.
    var scanned = 0
    /// Whether the head holds a complete request line (a line feed came): such a connection is never closed to make
    /// room, however slow its headers are (the connection time limit still applies).
    var hasRequestLine = false
    /// The response bytes and how many are written.
    var output: [UInt8] = []
    var written = 0
    /// Bytes discarded while draining.
    var discarded = 0
    /// Whether this connection carried the response that ended the wait (its page is sent before the end).
    var isFinal = false

    init(fd: Int32, acceptedAt: ContinuousClock.Instant, deadline: ContinuousClock.Instant) {
        self.fd = fd
        self.acceptedAt = acceptedAt
        self.deadline = deadline
    }

    /// The poll events the connection waits for.
    var events: Int16 {
        Int16(stage == .writing ? POLLOUT : POLLIN)
    }
}
