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

        settings.observer.signInWillOpenBrowser(url: url, listeningOn: listener.redirectURL)
        let page = settings.openBrowser(at: url)
        defer { page?.remove() }

        let callback = try await withDeadline(
            settings.timeout,
            tick: { settings.observer.waitingForBrowser(remaining: $0) },
            onTimeout: { SignInError.timedOut(after: settings.timeout, redirect: listener.redirectURL) }
        ) {
            try await waitForRedirect(listener: listener, request: request, settings: settings)
        }
        listener.close()
        guard let code = callback.code, !code.isEmpty else { throw SignInError.missingCode() }
        if requiresIssuerInResponse, callback.issuer == nil, let expectedIssuer {
            throw SignInError.missingIssuer(expected: expectedIssuer)
        }

        settings.observer.exchangingCode()
        let response = try await settings.httpClient.send(.form(tokenURL, fields: request.tokenFields(code: code)))
        let tokens = try TokenResponse.parse(response, endpoint: tokenURL)
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
