import Foundation
import PortalAuthStore

/// Where a sign-in receives its redirect: the loopback listener for an `http://127.0.0.1/…` redirect URL, the
/// private channel of the scheme's handler for a custom-scheme one (`my-maps-app://auth`). The flow talks to both
/// the same way; the checks of the response are the same ``CallbackEvaluator``.
enum RedirectReceiver: Sendable {
    case loopback(LoopbackListener)
    case scheme(SchemeRedirectReceiver)

    /// The environment read for `DISPLAY`, `WAYLAND_DISPLAY` and `XDG_RUNTIME_DIR` instead of the process's own;
    /// bound by tests that sign in inside the test process against a desktop of their own.
    @TaskLocal static var environmentOverride: [String: String]?

    /// The receiver for `redirectURL`.
    ///
    /// A custom scheme on a desktop session listens on a socket in `$XDG_RUNTIME_DIR/portal-auth`; without a
    /// desktop session it relies on the address pasted back, and fails when pasting is not allowed.
    static func make(
        redirectURL: URL, configuration: LoopbackListener.Configuration, settings: SignInSettings,
        environment: [String: String]? = nil
    ) throws -> RedirectReceiver {
        let environment = environment ?? environmentOverride ?? ProcessInfo.processInfo.environment
        guard let redirect = CustomSchemeRedirect(redirectURL) else {
            return .loopback(
                try LoopbackListener(redirectURL: redirectURL, configuration: configuration, logger: settings.logger))
        }
        guard CustomSchemeRedirect.hasDesktopSession(environment: environment) else {
            guard settings.acceptsPastedRedirect else { throw SchemeRedirectError.noDesktopSession(redirect) }
            return .scheme(try SchemeRedirectReceiver(redirect: redirect, directory: nil, logger: settings.logger))
        }
        let directory = try RedirectChannelDirectory.prepare(environment: environment)
        return .scheme(try SchemeRedirectReceiver(redirect: redirect, directory: directory, logger: settings.logger))
    }

    /// The redirect URL to send as `redirect_uri` (for loopback with the real port).
    var redirectURL: URL {
        switch self {
        case .loopback(let listener): listener.redirectURL
        case .scheme(let receiver): receiver.redirect.url
        }
    }

    /// Stops receiving; idempotent.
    func close() {
        switch self {
        case .loopback(let listener): listener.close()
        case .scheme(let receiver): receiver.close()
        }
    }

    /// Waits for the response with `state`.
    func waitForCallback(state: String, issuer: String?) async throws -> LoopbackCallback {
        switch self {
        case .loopback(let listener): try await listener.waitForCallback(state: state, issuer: issuer)
        case .scheme(let receiver): try await receiver.waitForCallback(state: state, issuer: issuer)
        }
    }

    /// The callback in a pasted address, by the same rules.
    func callback(fromPastedURL text: String, state: String, issuer: String?) throws(LoopbackError) -> LoopbackCallback
    {
        switch self {
        case .loopback(let listener): try listener.callback(fromPastedURL: text, state: state, issuer: issuer)
        case .scheme(let receiver): try receiver.callback(fromPastedURL: text, state: state, issuer: issuer)
        }
    }

    /// A pasted address checked by the receiver's own rules, or nil when the paste-back rules apply (loopback).
    func pastedOutcome(_ text: String, state: String, issuer: String?) -> Result<LoopbackCallback, LoopbackError>? {
        guard case .scheme(let receiver) = self else { return nil }
        do {
            return .success(try receiver.callback(fromPastedURL: text, state: state, issuer: issuer))
        } catch {
            return .failure(error)
        }
    }
}
