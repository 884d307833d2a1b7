import Foundation
import Synchronization

/// The one-line countdown shown on a terminal while the tool waits for the browser, redrawn in place.
final class StatusLine: Sendable {
    private let shown = Mutex(false)
    /// What is being waited for, e.g. "the sign-in in the browser".
    private let waitingFor: String

    init(waitingFor: String) {
        self.waitingFor = waitingFor
    }

    /// Draws "Waiting for … m:ss left (Ctrl-C to cancel)" when standard error is a terminal.
    func show(remaining: Duration) {
        guard StandardError.isTerminal else { return }
        let seconds = Int(remaining.components.seconds)
        let text = String(
            format: "Waiting for %@… %d:%02d left (Ctrl-C to cancel)", waitingFor, seconds / 60, seconds % 60)
        shown.withLock { $0 = true }
        StandardError.write("\r\u{1B}[2K" + text)
    }

    /// Removes the line, if one is shown.
    func clear() {
        let wasShown = shown.withLock { value in
            defer { value = false }
            return value
        }
        if wasShown { StandardError.write("\r\u{1B}[2K") }
    }
}
