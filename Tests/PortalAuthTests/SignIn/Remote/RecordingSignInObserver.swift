import Foundation
import Synchronization
@testable import PortalAuth

/// A `SignInObserver` that records the events of a remote sign-in, and can answer a paste-back prompt.
final class RecordingSignInObserver: SignInObserver {
    /// The events, in order, as short names (`device-code WDJB-MJHT`, `slow-down 10`, `paste-prompt`, …).
    private let recorded = Mutex<[String]>([])
    private let onPastePrompt: @Sendable (URL) -> Void

    /// - Parameter onPastePrompt: called with the authorization URL when paste-back asks for the final address.
    init(onPastePrompt: @escaping @Sendable (URL) -> Void = { _ in }) {
        self.onPastePrompt = onPastePrompt
    }

    var events: [String] { recorded.withLock { $0 } }

    private func record(_ event: String) { recorded.withLock { $0.append(event) } }

    func signInWillOpenBrowser(url: URL, listeningOn redirectURL: URL) { record("browser") }
    func browserLaunchFailed(_ message: String) { record("browser-failed") }
    func browserUnavailable(reason: String) { record("no-browser: \(reason)") }
    func pastedAddressRequested(authorizationURL: URL, expectedRedirect: URL) {
        record("paste-prompt")
        onPastePrompt(authorizationURL)
    }
    func pastedRedirectRejected(_ message: String) { record("paste-rejected: \(message)") }
    func deviceCodeIssued(_ authorization: DeviceAuthorization) { record("device-code \(authorization.userCode)") }
    func deviceCodePollingSlowedDown(interval: Duration) { record("slow-down \(interval.components.seconds)") }
    func exchangingCode() { record("exchange") }
}
