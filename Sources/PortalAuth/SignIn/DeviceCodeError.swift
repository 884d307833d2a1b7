import Foundation
import PortalAuthCore
import PortalAuthTransport

/// A device-code sign-in (RFC 8628) that did not complete for a reason of the grant itself.
///
/// Refusals of the endpoints keep their own type (`TokenEndpointError`), the network `TransportError`.
package struct DeviceCodeError: Error, Sendable, CustomStringConvertible, CategorizedError {
    /// What went wrong, for a front end that words its own advice.
    package enum Code: Sendable, Equatable {
        case notOffered(String)
        case denied
        case expired
        case timedOut(seconds: Int64)
        case invalidResponse(endpoint: String, problem: String)
    }

    /// The case, for a front end's own wording.
    package let code: Code

    private init(_ code: Code) { self.code = code }

    static func notOffered(authorizeURL: URL) -> DeviceCodeError {
        DeviceCodeError(.notOffered(RedactedURL(authorizeURL).description))
    }
    static let denied = DeviceCodeError(.denied)
    static let expired = DeviceCodeError(.expired)
    static func timedOut(after timeout: Duration) -> DeviceCodeError {
        DeviceCodeError(.timedOut(seconds: timeout.components.seconds))
    }
    static func invalidResponse(endpoint: URL, problem: String) -> DeviceCodeError {
        DeviceCodeError(.invalidResponse(endpoint: RedactedURL(endpoint).description, problem: problem))
    }

    /// Whether the identity provider has no device authorization endpoint this client knows of.
    public var isNotOffered: Bool {
        if case .notOffered = code { return true }
        return false
    }

    /// Whether the person denied the sign-in on the verification page (`access_denied`).
    public var isDenied: Bool { code == .denied }

    /// Whether the codes expired before the sign-in was approved (`expired_token`).
    public var isExpired: Bool { code == .expired }

    /// Whether the sign-in's time limit (``SignInSettings/timeout``) passed while the codes were still valid.
    public var isTimedOut: Bool {
        if case .timedOut = code { return true }
        return false
    }

    public var category: ErrorCategory {
        switch code {
        case .notOffered: .usage
        case .denied: .refused
        case .expired, .timedOut: .timedOut
        case .invalidResponse: .invalidContent
        }
    }

    /// What happened, without the advice that follows it in ``description`` (a front end adds its own).
    package var summary: String {
        switch code {
        case .notOffered(let authorize):
            return "the identity provider of \(authorize) offers no device code: its discovery document names no "
                + "device_authorization_endpoint."
        case .denied:
            return "the sign-in was denied on the verification page (access_denied)."
        case .expired:
            return "the code expired before the sign-in was approved (expired_token)."
        case .timedOut(let seconds):
            return "the sign-in was not approved within the time limit of \(seconds) s; the code was still valid."
        case .invalidResponse(let endpoint, let problem):
            return "the device authorization endpoint \(endpoint) answered with something unusable"
                + MessagePart.given(": ", problem) + ". "
                + "Check the identity provider's device authorization endpoint."
        }
    }

    /// What the app can do next, in the library's words, or nil.
    package var appAdvice: String? {
        switch code {
        case .notOffered:
            return
                "Name the endpoint (IAPCredential.credential(for:using:deviceAuthorizationURL:settings:replacing:)), or sign in "
                + "through a browser (SignInMethod.browser; on another machine SignInMethod.pasteBack with pasted addresses)."
        case .denied: return "Sign in again to retry."
        case .expired: return "Sign in again for a new code."
        case .timedOut: return "Sign in again, with a larger SignInSettings.timeout if approving takes longer."
        case .invalidResponse: return nil
        }
    }

    public var description: String {
        appAdvice.map { summary + " " + $0 } ?? summary
    }
}
