import Foundation

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
    /// Text of the success page in the browser.
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

    /// Runs the sign-in.
    func run(settings: SignInSettings) async throws -> Result {
        var configuration = LoopbackListener.Configuration()
        configuration.successMessage = successMessage
        let listener = try RedirectReceiver.make(redirectURL: redirectURL, configuration: configuration, settings: settings)
        defer { listener.close() }
        let request = try AuthorizationRequest(clientID: clientID, redirectURI: listener.redirectURL.absoluteString, wantsNonce: wantsNonce)
        let url = request.url(endpoint: authorizeURL, extra: extraParameters)
        // The ID token goes to the browser only: the observer shows `url`, and the opener hides what it opens (a
        // command gets the address of a private launch page, see `BrowserLaunchPage`).
        let opened = idTokenHint.map { request.url(endpoint: authorizeURL, extra: extraParameters + [("id_token_hint", $0)]) } ?? url

        settings.observer.signInWillOpenBrowser(url: url, listeningOn: listener.redirectURL)
        // The provider's answer to the same URL, looked at while the browser starts: a rejected request (an
        // unregistered redirect URL, an unknown client) ends the sign-in now rather than after the timeout.
        let probe = AuthorizationRequestProbe(url: url, redirectURI: listener.redirectURL)
        let probing = Task { await probe.check(httpClient: settings.httpClient, logger: settings.logger) }
        defer { probing.cancel() }
        let page = settings.openBrowser(at: opened)
        defer { page?.remove() }

        let callback = try await withDeadline(
            settings.timeout,
            tick: { settings.observer.waitingForBrowser(remaining: $0) },
            onTimeout: { SignInError.timedOut(after: settings.timeout, redirect: listener.redirectURL) }
        ) {
            try await withThrowingTaskGroup(of: LoopbackCallback?.self) { group in
                group.addTask { try await waitForRedirect(listener: listener, request: request, settings: settings) }
                group.addTask {
                    switch await probing.value {
                    case .rejected(let error): throw error
                    case .errorPage(let said): settings.observer.signInRequestProblem(said)
                    case .nothing: break
                    }
                    return nil
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

        settings.observer.exchangingCode()
        let response = try await settings.httpClient.send(.form(tokenURL, fields: request.tokenFields(code: code)))
        let tokens = try TokenResponse.parse(response, endpoint: tokenURL)
        // OIDC Core 3.1.3.3: with `openid` asked for, the ID token is what proves who signed in (nonce, audience,
        // issuer); an answer without one cannot be checked, so it is not accepted.
        if wantsNonce, tokens.idToken?.isEmpty ?? true { throw SignInError.missingIDToken(tokenURL: tokenURL) }
        return Result(tokens: tokens, request: request, redirectURI: request.redirectURI, receivedAt: Date())
    }

    /// The listener's callback, or a pasted redirect URL when that is allowed — whichever comes first.
    private func waitForRedirect(listener: RedirectReceiver, request: AuthorizationRequest, settings: SignInSettings) async throws -> LoopbackCallback {
        let state = request.state
        let issuer = expectedIssuer
        guard settings.acceptsPastedRedirect else {
            return try await listener.waitForCallback(state: state, issuer: issuer)
        }
        return try await withThrowingTaskGroup(of: LoopbackCallback?.self) { group in
            group.addTask { try await listener.waitForCallback(state: state, issuer: issuer) }
            group.addTask {
                for await line in StandardInputLines.stream() where !line.trimmingCharacters(in: .whitespaces).isEmpty {
                    do {
                        return try listener.callback(fromPastedURL: line, state: state, issuer: issuer)
                    } catch let error as LoopbackError where error.kind == .notAwaitedResponse {
                        settings.observer.pastedRedirectRejected(error.description)
                    }
                }
                return nil  // end of input: keep waiting for the browser
            }
            defer { group.cancelAll() }
            while let next = try await group.next() {
                if let callback = next { return callback }
            }
            throw CancellationError()
        }
    }
}
