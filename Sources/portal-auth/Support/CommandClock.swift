/// When the command started, from which its `--timeout` counts.
enum CommandClock {
    /// The moment `portal-auth` started (read first by `PortalAuthCommand.main()`).
    static let start = ContinuousClock.now

    /// The end of a command given `seconds` from the start.
    static func deadline(seconds: Int) -> ContinuousClock.Instant {
        start + .seconds(seconds)
    }
}
