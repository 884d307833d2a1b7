import Glibc
import PortalAuthCore

/// A failure of the loopback redirect listener or of the sign-in response it received.
///
/// Descriptions name the address, port and path involved and what to do next. They never contain the
/// authorization code, the `state` or the query of the response.
///
/// Categories:
/// - a redirect URL that is not a loopback `http` URL, and a fixed port that is busy or forbidden: `.usage` — the
///   redirect URL the caller chose (an option or the IAP file) names something that cannot be used; the fix is to
///   change it or to close the program holding the port, which is the caller's to do, not a fault of this machine;
/// - other socket failures (no descriptors left, no loopback interface, poll failing): `.local`;
/// - an `error` from the identity provider and an `iss` that is not the expected issuer: `.refused`;
/// - a matching response with neither `code` nor `error`: `.unavailable` (the identity provider misbehaves);
/// - a pasted redirect URL that is not the awaited response: `.invalidContent`;
/// - the wait's own time limit: `.timedOut`; Task cancellation and `close()` while waiting: `.cancelled`.
package struct LoopbackError: CategorizedError, Sendable, Equatable, CustomStringConvertible {
    // MARK: - Kinds

    /// What went wrong, for matching without reading messages (`error.kind == .portInUse`).
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// The redirect URL cannot be parsed or has a fragment.
        public static let invalidRedirectURL = Kind("invalidRedirectURL")
        /// The redirect URL is not `http` on 127.x.x.x, `[::1]` or `localhost`.
        public static let notLoopback = Kind("notLoopback")
        /// The fixed port of the redirect URL is used by another program.
        public static let portInUse = Kind("portInUse")
        /// Creating, binding or listening on a socket failed for another reason.
        public static let socketFailed = Kind("socketFailed")
        /// The identity provider answered with an `error` parameter.
        public static let identityProviderError = Kind("identityProviderError")
        /// The response's `iss` is not the expected issuer (RFC 9207).
        public static let issuerMismatch = Kind("issuerMismatch")
        /// The response matched the pending sign-in but is unusable (no `code` and no `error`).
        public static let invalidResponse = Kind("invalidResponse")
        /// A pasted redirect URL is not the one awaited (other path, or no matching `state`).
        public static let notAwaitedResponse = Kind("notAwaitedResponse")
        /// No response arrived within the wait's time limit.
        public static let timedOut = Kind("timedOut")
        /// The wait was cancelled, or the listener was closed before a response arrived.
        public static let cancelled = Kind("cancelled")
        /// The serving loop failed, or the listener was used after it ended.
        public static let listenerFailed = Kind("listenerFailed")
    }

    // MARK: - Codes

    private enum Code: Sendable, Equatable {
        case invalidRedirectURL(String, reason: String)
        case notLoopback(String, reason: String)
        case portInUse(address: String, port: Int)
        case portForbidden(address: String, port: Int)
        case socketFailed(address: String, port: Int, SystemError)
        case identityProviderError(code: String, description: String?, uri: String?)
        case issuerMismatch(expected: String, received: String)
        case invalidResponse(String)
        case notAwaitedResponse(reason: String)
        case timedOut(redirectURL: String, seconds: Int)
        case cancelled(redirectURL: String)
        case closed(redirectURL: String)
        case listenerFailed(String)
    }

    private let code: Code
    private init(_ code: Code) { self.code = code }

    // MARK: - Public facts

    /// What went wrong.
    public var kind: Kind {
        switch code {
        case .invalidRedirectURL: .invalidRedirectURL
        case .notLoopback: .notLoopback
        case .portInUse, .portForbidden: .portInUse
        case .socketFailed: .socketFailed
        case .identityProviderError: .identityProviderError
        case .issuerMismatch: .issuerMismatch
        case .invalidResponse: .invalidResponse
        case .notAwaitedResponse: .notAwaitedResponse
        case .timedOut: .timedOut
        case .cancelled, .closed: .cancelled
        case .listenerFailed: .listenerFailed
        }
    }

    /// The identity provider's `error` code (`access_denied`, …) when the response carried one.
    public var identityProviderErrorCode: String? {
        if case .identityProviderError(let code, _, _) = code { return code }
        return nil
    }

    /// The identity provider's `error_description`, when given.
    public var identityProviderErrorDescription: String? {
        if case .identityProviderError(_, let description, _) = code { return description }
        return nil
    }

    /// The identity provider's `error_uri`, when given.
    public var identityProviderErrorURI: String? {
        if case .identityProviderError(_, _, let uri) = code { return uri }
        return nil
    }

    public var category: ErrorCategory {
        switch code {
        case .invalidRedirectURL, .notLoopback, .portInUse, .portForbidden: .usage
        case .socketFailed, .listenerFailed: .local
        case .identityProviderError, .issuerMismatch: .refused
        case .invalidResponse: .unavailable
        case .notAwaitedResponse: .invalidContent
        case .timedOut: .timedOut
        case .cancelled, .closed: .cancelled
        }
    }

    public var description: String {
        // An empty value leaves its words out (issue 45): no address, port or reason is ever shown empty.
        func at(_ address: String, _ port: Int) -> String {
            address.isEmpty ? (port > 0 ? "port \(port)" : "the loopback address") : "\(address):\(port)"
        }
        let said = { (reason: String) in MessagePart.given(": ", reason) }
        let shown = { (url: String) in MessagePart.given(" ", url) }
        return switch code {
        case .invalidRedirectURL(let address, let reason):
            "The redirect URL\(shown(address)) cannot be used\(said(reason))."
        case .notLoopback(let address, let reason):
            "The redirect URL\(shown(address)) cannot be used on this platform\(said(reason)). Use a loopback URL such as "
                + "http://127.0.0.1/callback (any port, or none for a free one), http://[::1]/callback or "
                + "http://localhost/callback, registered with the identity provider."
        case .portInUse(let address, let port):
            "Cannot listen on \(at(address, port)) for the sign-in response: another program is using "
                + (port > 0 ? "port \(port). " : "it. ")
                + "Close that program, or choose another port in the redirect URL (and register that URL with the "
                + "identity provider); a redirect URL without a port uses a free one."
        case .portForbidden(let address, let port):
            "Cannot listen on \(at(address, port)) for the sign-in response: ports below 1024 need privileges. "
                + "Choose a port above 1023 in the redirect URL, or leave the port out to use a free one."
        case .socketFailed(let address, let port, let error):
            "Cannot listen on \(at(address, port)) for the sign-in response (\(error))."
        case .identityProviderError(let code, let description, let uri):
            // The redirect's text is the identity provider's (or anyone's who can reach the port): one clean line.
            "The identity provider refused the sign-in"
                + MessagePart.given(": ", DisplayText.neutralised(code, limit: 80))
                + MessagePart.given(" — ", description.map { DisplayText.neutralised($0, limit: 300) })
                + MessagePart.given(" (see ", uri.map { DisplayText.neutralised($0, limit: 200) }, ")") + "."
                + (EntraErrorAdvice.advice(forDescription: description).map { " " + $0 }
                    ?? (code == "access_denied"
                        ? " It was cancelled or refused in the browser; nothing was stored."
                        : " Check the client ID, the redirect URL registered for it and the scopes asked for."))
        case .issuerMismatch(let expected, let received):
            "The sign-in response came from "
                + MessagePart.or(
                    MessagePart.given("issuer ", DisplayText.neutralised(received, limit: 200)), "an unnamed issuer")
                + ", not the expected \(MessagePart.or(expected, "one")) (RFC 9207); it was "
                + "rejected. Sign in again, and check the identity provider configuration if this repeats."
        case .invalidResponse(let reason):
            "The identity provider's sign-in response cannot be used\(said(reason)). Sign in again; if this repeats, "
                + "the identity provider is misbehaving."
        case .notAwaitedResponse(let reason):
            "The pasted address is not the awaited sign-in response\(said(reason))."
        case .timedOut(let url, let seconds):
            "No sign-in response reached \(MessagePart.or(url, "the redirect URL")) within \(seconds) s. Finish signing in "
                + "in the browser sooner, "
                + "or open the printed URL by hand, or allow more time."
        case .cancelled(let url):
            "The sign-in was cancelled while waiting for the response" + MessagePart.given(" at ", url) + "."
        case .closed(let url):
            "The listener" + MessagePart.given(" at ", url) + " was closed before a sign-in response arrived."
        case .listenerFailed(let reason):
            "The loopback listener failed\(said(reason))."
        }
    }

    // MARK: - Internal constructors

    static func invalidRedirectURL(_ url: String, reason: String) -> LoopbackError {
        .init(.invalidRedirectURL(url, reason: reason))
    }

    static func notLoopback(_ url: String, reason: String) -> LoopbackError {
        .init(.notLoopback(url, reason: reason))
    }

    /// Maps a failed `bind`/`listen` on `address:port` to the most helpful error.
    static func bindFailed(address: String, port: Int, _ error: SystemError) -> LoopbackError {
        switch error.errno {
        case EADDRINUSE: .init(.portInUse(address: address, port: port))
        case EACCES where port < 1024: .init(.portForbidden(address: address, port: port))
        default: .init(.socketFailed(address: address, port: port, error))
        }
    }

    static func identityProviderError(code: String, description: String?, uri: String?) -> LoopbackError {
        .init(.identityProviderError(code: code, description: description, uri: uri))
    }

    static func issuerMismatch(expected: String, received: String) -> LoopbackError {
        .init(.issuerMismatch(expected: expected, received: received))
    }

    static func invalidResponse(_ reason: String) -> LoopbackError { .init(.invalidResponse(reason)) }

    static func notAwaitedResponse(_ reason: String) -> LoopbackError {
        .init(.notAwaitedResponse(reason: reason))
    }

    static func timedOut(redirectURL: String, after timeout: Duration) -> LoopbackError {
        .init(.timedOut(redirectURL: redirectURL, seconds: Int(timeout.components.seconds)))
    }

    static func cancelled(redirectURL: String) -> LoopbackError { .init(.cancelled(redirectURL: redirectURL)) }

    static func closed(redirectURL: String) -> LoopbackError { .init(.closed(redirectURL: redirectURL)) }

    static func listenerFailed(_ reason: String) -> LoopbackError { .init(.listenerFailed(reason)) }
}
