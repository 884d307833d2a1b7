public import Foundation
import PortalAuthTransport

/// Paste-back: the person opens the authorization URL in a browser on any machine, signs in, and pastes the address
/// the browser ends on (the redirect, which this machine may never receive). Reusable by any flow that cannot receive
/// its redirect here: loopback redirects without a browser, custom-scheme redirects without a display.
///
/// ```swift
/// let reader = PastedRedirectReader(settings: settings)
/// let callback = try await reader.callback(authorizationURL: url, expectedRedirect: redirect, state: state)
/// ```
/// A pasted line that is not the awaited response is explained through the observer's
/// ``SignInObserver/pastedRedirectRejected(_:)`` (one sentence) and the next line is read; an identity provider's
/// `error` in the pasted address ends the sign-in with that error.
public struct PastedRedirectReader: Sendable {
    private let observer: any SignInObserver
    private let lines: @Sendable () -> AsyncStream<String>
    private let announces: Bool

    /// A reader of the settings' pasted lines (standard input by default), reporting to the settings' observer.
    public init(settings: SignInSettings) {
        self.init(settings: settings, announces: true)
    }

    /// `announces: false` reads pasted lines beside a browser sign-in without asking for them.
    init(settings: SignInSettings, announces: Bool) {
        self.observer = settings.observer
        self.lines = settings.pastedLines
        self.announces = announces
    }

    /// Asks for the final address and returns its parameters once a pasted line is the awaited response.
    ///
    /// - Parameters:
    ///   - authorizationURL: what the person opens (shown through the observer).
    ///   - expectedRedirect: the redirect URL sent as `redirect_uri`; the pasted address must have its scheme, host
    ///     and path (a custom scheme such as `my-app://auth` too).
    ///   - state: the `state` sent; a pasted address with another one is refused and the next line is read.
    ///   - issuer: the issuer `iss` must equal, when known (RFC 9207).
    /// - Throws: a loopback error (a `CategorizedError`) with the identity provider's error, `SignInError` when input ends first,
    ///   `CancellationError`.
    public func callback(authorizationURL: URL, expectedRedirect: URL, state: String, issuer: String? = nil)
        async throws -> LoopbackCallback
    {
        try await callback(
            authorizationURL: authorizationURL, expectedRedirect: expectedRedirect, state: state, issuer: issuer,
            reading: nil)
    }

    /// ``callback(authorizationURL:expectedRedirect:state:issuer:)`` with `reading` checking each pasted line instead
    /// of this reader's own rules, when given (a receiver with rules of its own, such as a custom scheme's).
    func callback(
        authorizationURL: URL, expectedRedirect: URL, state: String, issuer: String?,
        reading: (@Sendable (String) -> Result<LoopbackCallback, LoopbackError>?)?
    ) async throws -> LoopbackCallback {
        if announces {
            observer.pastedAddressRequested(authorizationURL: authorizationURL, expectedRedirect: expectedRedirect)
        }
        for await line in lines() where !line.trimmingCharacters(in: .whitespaces).isEmpty {
            try Task.checkCancellation()
            let outcome =
                reading?(line)
                ?? Self.outcome(of: line, expectedRedirect: expectedRedirect, state: state, issuer: issuer)
            switch outcome {
            case .success(let callback):
                return callback
            case .failure(let error) where error.kind == .notAwaitedResponse:
                observer.pastedRedirectRejected(error.description)
            case .failure(let error):
                throw error
            }
        }
        try Task.checkCancellation()
        throw SignInError.inputClosed()
    }

    /// ``callback(fromPasted:expectedRedirect:state:issuer:)`` as a value.
    static func outcome(of line: String, expectedRedirect: URL, state: String, issuer: String?) -> Result<
        LoopbackCallback, LoopbackError
    > {
        do {
            return .success(
                try callback(fromPasted: line, expectedRedirect: expectedRedirect, state: state, issuer: issuer))
        } catch {
            return .failure(error)
        }
    }

    /// Checks one pasted line against the expected redirect and state.
    static func callback(fromPasted text: String, expectedRedirect: URL, state: String, issuer: String?)
        throws(LoopbackError) -> LoopbackCallback
    {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if let pasted = URL(string: trimmed), let scheme = pasted.scheme, !scheme.isEmpty {
            guard scheme.lowercased() == expectedRedirect.scheme?.lowercased(),
                URLNormalization.host(of: pasted) == URLNormalization.host(of: expectedRedirect)
            else {
                let start = expectedRedirect.absoluteString
                throw .notAwaitedResponse(
                    "it does not start with \(start); paste the address the browser shows after signing in")
            }
        }
        let path = URLComponents(url: expectedRedirect, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? "/"
        return try CallbackEvaluator(path: path, states: [state], issuer: issuer).callback(fromPastedURL: trimmed)
    }
}
