import Foundation
import Logging
import PortalAuthCore
import PortalAuthStore

/// One interactive authorization-code sign-in with PKCE through the system browser and a loopback
/// redirect (RFC 8252) — or a custom-scheme redirect through the desktop's scheme handler — shared by the ArcGIS
/// portal and the IAP credentials.
///
/// Steps: bind the loopback listener (its real port goes into `redirect_uri`), open the browser on the
/// authorization URL, wait for the matching redirect (or a pasted one) within the timeout, then
/// exchange the code for tokens. The listener is closed whatever the outcome, Ctrl-C included.
struct AuthorizationCodeFlow: Sendable {
    /// The authorization endpoint.
    var authorizeURL: URL
    /// The token endpoint.
    var tokenURL: URL
    /// The public client.
    var clientID: String
    /// The registered loopback redirect URL (port 0 or none: an ephemeral port), or a custom-scheme one.
    var redirectURL: URL
    /// Parameters added to the authorization URL (`scope`, `prompt`, `expiration`, …).
    var extraParameters: [(String, String)]
    /// Whether to send a `nonce` (OpenID Connect).
    var wantsNonce: Bool
    /// The issuer `iss` must equal, when known.
    var expectedIssuer: String?
    /// Whether the authorization response must carry `iss` (the server advertises it, RFC 9207).
    var requiresIssuerInResponse = false
    /// Text of the success page in the browser ("You are signed in to …"), before the settings' `pageReturnHint`.
    var successMessage: String
    /// An ID token sent as `id_token_hint` (OIDC Core 3.1.2.1, with `prompt=none`): to the browser only, through
    /// the opener's private launch page, never to the observer or the browser command's arguments.
    var idTokenHint: String? = nil

    /// What the sign-in produced.
    struct Result: Sendable {
        let tokens: TokenResponse
        let request: AuthorizationRequest
        /// The redirect URI as sent, with the real port.
        let redirectURI: String
        let receivedAt: Date
    }

    /// How the person reaches the authorization URL.
    enum Presentation: Sendable {
        /// The browser opens here; a browser command that fails is reported and the URL shown can still be opened
        /// by hand.
        case browser
        /// The browser opens here; if its command fails, the URL already shown stays the one to open (on any
        /// machine) and the address the browser ends on is read from the pasted lines, so that no second, fresh URL
        /// is shown after a dead one. When `takenOver` answers true at that moment (another remote path, such as a
        /// device code, will be used instead), or when the settings take no pasted lines, the flow ends with
        /// `SignInError.browserFailed` for the caller's remote path.
        case browserElsePaste(takenOver: @Sendable () async -> Bool)
        /// No browser: the person signs in anywhere and pastes the final address (no countdown is drawn).
        case pasteBack

        var isPasteBack: Bool {
            if case .pasteBack = self { return true }
            return false
        }
    }

    /// Runs the sign-in. Without a `presentation`: paste-back when the settings have no browser and accept pasting,
    /// else the browser.
    func run(settings: SignInSettings, presentation: Presentation? = nil) async throws -> Result {
        let presentation =
            presentation ?? (settings.browser == nil && settings.acceptsPastedRedirect ? .pasteBack : .browser)
        var configuration = LoopbackListener.Configuration()
        // The pages' last words are the settings' (a terminal program, or an app that names itself).
        configuration.successMessage = successMessage + " " + settings.pageReturnHint
        configuration.failureNextStep = settings.pageFailureHint
        let listener = try RedirectReceiver.make(
            redirectURL: redirectURL, configuration: configuration, settings: settings)
        defer { listener.close() }
        let request = try AuthorizationRequest(
            clientID: clientID, redirectURI: listener.redirectURL.absoluteString, wantsNonce: wantsNonce)
        let url = request.url(endpoint: authorizeURL, extra: extraParameters)
        // The ID token goes to the browser only: the observer shows `url`, and the opener hides what it opens (a
        // command gets the address of a private launch page, see `BrowserLaunchPage`).
        let opened =
            idTokenHint.map { request.url(endpoint: authorizeURL, extra: extraParameters + [("id_token_hint", $0)]) }
            ?? url

        var browserFailures: BrowserFailures?
        var page: BrowserLaunchPage?
        // The provider's answer to the same URL, before the browser opens (or the person is asked to sign in
        // elsewhere): an endpoint that cannot be reached or a rejected request (an unregistered redirect URL, an
        // unknown client) ends the sign-in now rather than after the timeout, and no browser tab shows the error.
        let probe = AuthorizationRequestProbe(url: url, redirectURI: listener.redirectURL)
        let finding = await probe.check(httpClient: settings.httpClient, logger: settings.logger)
        try Task.checkCancellation()
        switch finding {
        case .rejected(let error): throw error
        case .unreachable(let error): throw error
        case .refused(let said): throw SignInError.requestRefused(authorizeURL: authorizeURL, said)
        case .errorPage, .nothing: break
        }
        if !presentation.isPasteBack {
            settings.observer.signInWillOpenBrowser(url: url, listeningOn: listener.redirectURL)
            if settings.browser == nil {
                try Self.reachNoBrowser(url: url, redirect: listener.redirectURL, settings: settings)
            }
        }
        if case .errorPage(let said) = finding { settings.observer.signInRequestProblem(said) }
        switch presentation {
        case .browser where settings.tellsNobody && settings.browser != nil:
            // Nobody is shown the URL: a browser that fails ends the sign-in at once, instead of a silent wait.
            let launched = settings.openBrowserReportingFailures(at: opened, announcing: false)
            page = launched.page
            browserFailures = BrowserFailures(messages: launched.failures, then: .unheard)
        case .browser:
            page = settings.openBrowserReportingFailures(at: opened).page
        case .browserElsePaste(let takenOver):
            // The failure is reported once, by the paste request or by the remote path that takes over.
            let launched = settings.openBrowserReportingFailures(at: opened, announcing: false)
            page = launched.page
            // A paste request nobody sees would be a silent wait: the caller's remote path decides instead.
            browserFailures = BrowserFailures(
                messages: launched.failures,
                then: settings.acceptsPastedRedirect && !settings.tellsNobody
                    ? .askForPaste(unless: takenOver) : .endSignIn)
        case .pasteBack:
            break
        }
        defer { page?.remove() }
        let pastes = presentation.isPasteBack || settings.acceptsPastedRedirect

        let callback = try await withDeadline(
            settings.timeout,
            // Nothing is redrawn while the person is asked to paste (paste-back); beside a browser the countdown stays.
            tick: { remaining in
                if !presentation.isPasteBack { settings.observer.waitingForBrowser(remaining: remaining) }
            },
            onTimeout: { SignInError.timedOut(after: settings.timeout, redirect: listener.redirectURL) }
        ) { [browserFailures] in
            try await withThrowingTaskGroup(of: LoopbackCallback?.self) { group in
                group.addTask {
                    try await waitForRedirect(
                        listener: listener, authorizationURL: url, request: request, settings: settings,
                        acceptsPaste: pastes, opensBrowser: !presentation.isPasteBack, browserFailures: browserFailures)
                }
                defer { group.cancelAll() }
                while let next = try await group.next() {
                    if let callback = next { return callback }
                }
                throw CancellationError()
            }
        }
        listener.close()
        guard let code = callback.code, !code.isEmpty else { throw SignInError.missingCode() }
        if requiresIssuerInResponse, callback.issuer == nil, let expectedIssuer {
            throw SignInError.missingIssuer(expected: expectedIssuer)
        }
        // With no issuer known, an `iss` of another origin than the authorize endpoint names another provider: the
        // code is not sent to this one's token endpoint (RFC 9700 §4.4, mix-up without a discovery document).
        if expectedIssuer == nil, let received = callback.issuer,
            !IssuerDiscovery.isSameOrigin(received, as: authorizeURL)
        {
            throw LoopbackError.issuerMismatch(
                expected: "an issuer at the authorize endpoint's origin \(Self.origin(of: authorizeURL))",
                received: received)
        }

        settings.observer.exchangingCode()
        let response = try await request.tokenRequest(code: code, tokenURL: tokenURL).send(with: settings.httpClient)
        let tokens = try TokenResponse.parse(response, endpoint: tokenURL)
        // OIDC Core 3.1.3.3: with `openid` asked for, the ID token is what proves who signed in (nonce, audience,
        // issuer); an answer without one cannot be checked, so it is not accepted.
        if wantsNonce, tokens.idToken?.isEmpty ?? true { throw SignInError.missingIDToken(tokenURL: tokenURL) }
        return Result(tokens: tokens, request: request, redirectURI: request.redirectURI, receivedAt: Date())
    }

    /// The receiver's callback, a pasted redirect URL when that is allowed, or a browser failure when one ends the
    /// flow — whichever comes first.
    private func waitForRedirect(
        listener: RedirectReceiver, authorizationURL: URL, request: AuthorizationRequest, settings: SignInSettings,
        acceptsPaste: Bool, opensBrowser: Bool, browserFailures: BrowserFailures?
    ) async throws -> LoopbackCallback {
        let state = request.state
        let issuer = expectedIssuer
        guard acceptsPaste || browserFailures != nil else {
            return try await listener.waitForCallback(state: state, issuer: issuer)
        }
        return try await withThrowingTaskGroup(of: LoopbackCallback?.self) { group in
            group.addTask { try await listener.waitForCallback(state: state, issuer: issuer) }
            group.addTask {
                // A browser that may fail over is heard out first: pasted lines are read only once it started, so a
                // failure leaves them to the remote path that follows.
                var asked = false
                if let browserFailures {
                    for await message in browserFailures.messages {
                        switch browserFailures.then {
                        case .endSignIn:
                            throw SignInError.browserFailed(message)
                        case .unheard:
                            throw settings.unheard(SignInError.browserFailed(message).browserFailureReason ?? message)
                        case .askForPaste(let takenOver):
                            if await takenOver() { throw SignInError.browserFailed(message) }
                            // The URL shown stays valid: it is opened elsewhere, and its final address pasted here.
                            settings.observer.browserFailedPasteRequested(
                                message, expectedRedirect: listener.redirectURL)
                            asked = true
                        }
                    }
                }
                guard acceptsPaste else { return nil }  // the browser command succeeded: keep waiting
                do {
                    // A custom-scheme address is read by the scheme receiver's own rules.
                    return try await PastedRedirectReader(settings: settings, announces: !opensBrowser && !asked)
                        .callback(
                            authorizationURL: authorizationURL, expectedRedirect: listener.redirectURL, state: state,
                            issuer: issuer,
                            reading: { listener.pastedOutcome($0, state: state, issuer: issuer) })
                } catch let error as SignInError {
                    // End of input. The person was asked to paste (paste-back, or after a failed browser command):
                    // nothing else can come, so the sign-in ends now. Beside a browser nobody asked about, its
                    // redirect may still arrive: keep waiting for it.
                    if !opensBrowser || asked { throw error }
                    return nil
                }
            }
            defer { group.cancelAll() }
            while let next = try await group.next() {
                if let callback = next { return callback }
            }
            throw CancellationError()
        }
    }

    /// The failures of a browser command the sign-in listens to (``Presentation/browserElsePaste(takenOver:)``), and
    /// what a failure does to it.
    struct BrowserFailures: Sendable {
        enum Then: Sendable {
            /// The flow ends with `SignInError.browserFailed`, for the caller's remote path.
            case endSignIn
            /// The flow ends with the error of a sign-in nobody hears of (logged), the observer being silent.
            case unheard
            /// The person is asked to open the URL already shown elsewhere and paste the final address, unless the
            /// closure answers that another remote path takes over.
            case askForPaste(unless: @Sendable () async -> Bool)
        }

        let messages: AsyncStream<String>
        let then: Then
    }

    /// `scheme://host[:port]` of `url`, for messages.
    static func origin(of url: URL) -> String {
        var components = URLComponents()
        components.scheme = url.scheme
        components.host = url.host
        components.port = url.port
        return components.string ?? url.absoluteString
    }

    /// With no browser to open, the authorization URL must reach someone: it is logged (`notice`, the URL without
    /// any `id_token_hint`), and when neither the observer nor the logger would pass it on (the defaults,
    /// `SilentSignInObserver` and a no-op log handler) the sign-in fails at once instead of waiting in silence.
    static func reachNoBrowser(url: URL, redirect: URL, settings: SignInSettings) throws {
        settings.logger.notice(
            "no browser is set: open the sign-in URL in a browser",
            metadata: [
                "url": "\(url.absoluteString)", "redirect": "\(redirect.absoluteString)",
            ])
        if settings.observer is SilentSignInObserver && settings.logger.handler is SwiftLogNoOpLogHandler {
            throw SignInError.urlUnheard()
        }
    }
}
