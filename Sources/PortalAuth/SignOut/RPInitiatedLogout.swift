package import Foundation
import Logging
import PortalAuthCore

/// One OpenID Connect RP-initiated logout through the browser, confirmed on a loopback redirect.
///
/// Steps: bind a loopback listener on the registered redirect URL (its real port goes into
/// `post_logout_redirect_uri`), open the browser on the logout endpoint with `client_id`,
/// `post_logout_redirect_uri`, `state` and `id_token_hint`, then wait for the identity provider to redirect
/// back with the same `state`. The listener is closed whatever the outcome. The observer is given the logout URL
/// (without the ID token, which is for the browser only), an address that works on any machine; an observer of this
/// machine's terminal (`LogoutPageObserver`) is also given a private `file:` launch page that carries the ID token.
struct RPInitiatedLogout: Sendable {
    /// The identity provider's logout (end-session) endpoint.
    var logoutURL: URL
    /// The public client.
    var clientID: String
    /// The registered loopback redirect URL (port 0 or none: an ephemeral port).
    var redirectURL: URL
    /// The ID token of the session to end; sent to the browser only, never to the observer.
    var idTokenHint: String?
    /// Text of the page the browser shows after the confirmation.
    var successMessage: String

    /// Runs the logout: `true` when the identity provider redirected back with the request's `state`, `false`
    /// when nothing came within `settings.timeout` (the browser session may remain).
    ///
    /// - Throws: `LoopbackError` (the redirect URL cannot be listened on; the identity provider redirected back
    ///   with an `error`), `CryptoError`, `CancellationError`.
    func run(settings: SignInSettings) async throws -> Bool {
        try Task.checkCancellation()  // no browser tab for a sign-out that was already stopped
        var configuration = LoopbackListener.Configuration(
            successTitle: "Signed out", successMessage: successMessage + " " + settings.pageReturnHint)
        configuration.failureNextStep = settings.pageFailureHint
        let listener = try LoopbackListener(
            redirectURL: redirectURL, configuration: configuration, logger: settings.logger)
        defer { listener.close() }
        let state = try SecureRandom.token()
        let parameters = [
            ("client_id", clientID), ("post_logout_redirect_uri", listener.redirectURL.absoluteString),
            ("state", state),
        ]
        let plain = URLQuery.appending(parameters, to: logoutURL)
        // The ID token never goes into the browser command's arguments: the opener hides the URL (a command gets
        // the address of a private launch page, see `BrowserLaunchPage`), and nothing on loopback hands it out.
        let opened =
            idTokenHint.map { URLQuery.appending(parameters + [("id_token_hint", $0)], to: logoutURL) } ?? plain

        // Where no browser here can reach the person (SSH, no display), none is started: the remote path (the plain
        // logout URL, for a browser elsewhere: a launch page on this machine would not open there).
        if let reason = settings.remoteReason {
            return try await remote(listener: listener, shown: plain, state: state, reason: reason, settings: settings)
        }
        // What the observer shows for opening by hand: with an ID token, the address of a private launch page of its
        // own that carries it (0600, removed when the logout ends) — a provider may sign nothing out without the
        // hint (Glewlwyd answers an empty page) — never the token itself; else the logout URL.
        let pageObserver = settings.observer as? any LogoutPageObserver
        let manualPage =
            idTokenHint == nil || pageObserver == nil ? nil : Self.launchPage(forwardingTo: opened, settings: settings)
        defer { manualPage?.remove() }
        if let manualPage { pageObserver?.logoutPageWritten(manualPage.fileURL) }
        settings.observer.signInWillOpenBrowser(url: plain, listeningOn: listener.redirectURL)
        let page = settings.openBrowser(at: opened)
        defer { page?.remove() }

        struct NoConfirmation: Error {}
        do {
            _ = try await withDeadline(
                settings.timeout,
                tick: { settings.observer.waitingForBrowser(remaining: $0) },
                onTimeout: { NoConfirmation() }
            ) {
                try await listener.waitForCallback(state: state, requiresCode: false)
            }
            settings.logger.debug(
                "logout confirmed by the identity provider", metadata: ["logout_url": "\(RedactedURL(logoutURL))"])
            return true
        } catch is NoConfirmation {
            settings.logger.debug(
                "no logout confirmation before the timeout", metadata: ["logout_url": "\(RedactedURL(logoutURL))"])
            return false
        }
    }

    /// A private launch page forwarding to `url`, in the folder the settings' browser command uses (else the
    /// default one); `nil` when none can be written (logged; the logout URL without the ID token is shown instead).
    static func launchPage(forwardingTo url: URL, settings: SignInSettings) -> BrowserLaunchPage? {
        let command = settings.browser as? CommandBrowserOpener
        let directory = command?.launchDirectory ?? BrowserLaunchPage.directory(forCommand: command?.commands.first)
        do {
            return try BrowserLaunchPage(forwardingTo: url, in: directory)
        } catch {
            settings.logger.debug("no launch page for opening the logout by hand", metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// The logout without a browser here: the person opens `shown` in the browser they signed in with (anywhere) and
    /// pastes the address it ends on, which confirms the logout as the loopback redirect would; end of input (Ctrl-D)
    /// or the timeout leaves it unconfirmed. Without a terminal to paste on, it fails at once
    /// (`SignInError.needsTerminal`) instead of waiting for a redirect that cannot come.
    private func remote(listener: LoopbackListener, shown: URL, state: String, reason: String, settings: SignInSettings)
        async throws -> Bool
    {
        guard settings.acceptsPastedRedirect else {
            // Asked for explicitly (`.pasteBack` without a terminal): the URL is shown, the redirect may still come
            // from a browser opened by hand on this machine.
            guard settings.signInMethod == .pasteBack else { throw SignInError.noRemoteLogout(reason) }
            settings.observer.signInWillOpenBrowser(url: shown, listeningOn: listener.redirectURL)
            return try await waitForConfirmation(settings: settings) {
                _ = try await listener.waitForCallback(state: state, requiresCode: false)
                return true
            }
        }
        settings.observer.browserUnavailable(reason: reason)
        let reader = PastedRedirectReader(settings: settings)
        return try await waitForConfirmation(settings: settings) {
            try await withThrowingTaskGroup(of: Bool.self) { group in
                group.addTask {
                    _ = try await listener.waitForCallback(state: state, requiresCode: false)
                    return true
                }
                group.addTask {
                    do {
                        _ = try await reader.callback(
                            authorizationURL: shown, expectedRedirect: listener.redirectURL, state: state, issuer: nil,
                            reading: { text in
                                do throws(LoopbackError) {
                                    return .success(
                                        try listener.callback(fromPastedURL: text, state: state, requiresCode: false))
                                } catch {
                                    return .failure(error)
                                }
                            })
                        return true
                    } catch let error as SignInError where error.isInputClosed {
                        return false  // Ctrl-D: the person leaves the browser session as it is
                    }
                }
                defer { group.cancelAll() }
                return try await group.next() ?? false
            }
        }
    }

    /// Runs `wait` within the settings' timeout: true when it confirmed, false when the time ran out first.
    private func waitForConfirmation(settings: SignInSettings, _ wait: @escaping @Sendable () async throws -> Bool)
        async throws -> Bool
    {
        struct NoConfirmation: Error {}
        do {
            return try await withDeadline(settings.timeout, onTimeout: { NoConfirmation() }, wait)
        } catch is NoConfirmation {
            return false
        }
    }
}

/// An observer on this machine's terminal that can offer a private `file:` launch page for opening the logout by
/// hand (the page carries the ID token to the logout endpoint; a provider may sign nothing out without it). Told
/// before `signInWillOpenBrowser(url:listeningOn:)`, which receives the logout URL without the ID token.
package protocol LogoutPageObserver: SignInObserver {
    /// A private page (0600, removed when the logout ends) that sends the browser to the logout with the ID token.
    func logoutPageWritten(_ page: URL)
}
