import Foundation
import Synchronization
@testable import PortalAuth

/// A `SignInObserver` that records the events of a remote sign-in, and can answer a paste-back prompt.
final class RecordingSignInObserver: SignInObserver {
    /// The events, in order, as short names (`device-code WDJB-MJHT`, `slow-down 10`, `paste-prompt`, …).
    private let recorded = Mutex<[String]>([])
    private let onPastePrompt: @Sendable (URL) -> Void

    /// - Parameter onPastePrompt: called with the authorization URL when paste-back asks for the final address (after
    ///   a failing browser: the URL shown beside it).
    init(onPastePrompt: @escaping @Sendable (URL) -> Void = { _ in }) {
        self.onPastePrompt = onPastePrompt
    }

    var events: [String] { recorded.withLock { $0 } }

    private func record(_ event: String) { recorded.withLock { $0.append(event) } }

    /// The URL shown beside the browser, which a failing browser leaves to be opened elsewhere.
    private let shown = Mutex<URL?>(nil)

    func signInWillOpenBrowser(url: URL, listeningOn redirectURL: URL) {
        shown.withLock { $0 = url }
        record("browser")
    }
    func browserFailedPasteRequested(_ message: String, expectedRedirect: URL) {
        record("browser-failed-paste: \(message)")
        if let url = shown.withLock({ $0 }) { onPastePrompt(url) }
    }
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
