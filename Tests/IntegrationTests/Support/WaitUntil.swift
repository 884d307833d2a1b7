import Testing

/// Polls `condition` until it holds (a hang guard of 60 s, not a measurement); records `what` did not happen and
/// throws `CancellationError` when it does not.
func waitUntil(_ what: String, _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(60)
    while try await !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("\(what): not within 60 s")
            throw CancellationError()
        }
        try await Task.sleep(for: .milliseconds(20))
    }
}
