import Foundation
import PortalAuthStore

extension OAuthUserCredential {
    /// Signs the user in to the portal by `method` and returns the credential.
    ///
    /// ArcGIS portals have no device code. Without a browser here the remote paths are paste-back (sign in on any
    /// machine, paste the address the browser ends on; ``SignInSettings/acceptsPastedRedirect`` must be true) and,
    /// where the app's registration lists `urn:ietf:wg:oauth:2.0:oob`, ``SignInMethod/outOfBand`` (the portal's page
    /// shows a code to paste). ``SignInMethod/automatic`` uses the browser when it can reach the person (see
    /// ``SignInEnvironment``), else — or when the browser command fails — paste-back, else ``SignInError`` at once;
    /// with no browser set and no pasting, the URL goes to the observer (and the logger) and the loopback redirect is
    /// awaited, as for ``SignInMethod/browser``.
    ///
    /// - Throws: as ``credential(for:settings:)``; ``SignInError`` for ``SignInMethod/deviceCode``.
    public static func credential(
        for configuration: OAuthUserConfiguration, using method: SignInMethod,
        settings: SignInSettings = SignInSettings()
    ) async throws -> OAuthUserCredential {
        switch method {
        case .browser:
            return try await authorizationCodeCredential(for: configuration, presentation: .browser, settings: settings)
        case .pasteBack:
            guard settings.acceptsPastedRedirect else {
                throw SignInError.noRemotePath("paste-back was asked for", deviceCodeRuledOut: true)
            }
            return try await authorizationCodeCredential(
                for: configuration, presentation: .pasteBack, settings: settings)
        case .deviceCode:
            throw SignInError.portalHasNoDeviceCode()
        case .outOfBand:
            guard settings.acceptsPastedRedirect else {
                throw SignInError.noRemotePath("an out-of-band code was asked for", deviceCodeRuledOut: true)
            }
            let flow = OutOfBandFlow(
                authorizeURL: configuration.authorizeURL, tokenURL: configuration.tokenURL,
                clientID: configuration.clientID,
                extraParameters: [("expiration", String(configuration.refreshTokenExpirationMinutes))])
            let result = try await flow.run(settings: settings)
            return signedIn(
                configuration, result: result, redirectURL: URL(string: OutOfBandFlow.redirectURI)!, settings: settings)
        case .automatic:
            let reason: String
            if settings.browserReachesPerson {
                do {
                    // A failing browser command leaves the URL already shown to be opened elsewhere (paste-back).
                    return try await authorizationCodeCredential(
                        for: configuration, presentation: .browserElsePaste(takenOver: { false }), settings: settings)
                } catch let error as SignInError where error.isBrowserFailure {
                    reason = error.browserFailureReason ?? error.description
                }
            } else {
                reason = settings.reasonBrowserUnused
            }
            // A paste request shown to nobody would be a silent wait: stop now, and say what to set.
            if settings.tellsNobody, settings.browser != nil { throw settings.unheard(reason) }
            guard settings.acceptsPastedRedirect else {
                // No browser set: the caller shows the URL itself (its observer or logger hears it).
                if settings.browser == nil {
                    return try await authorizationCodeCredential(
                        for: configuration, presentation: .browser, settings: settings)
                }
                throw SignInError.noRemotePath(reason, deviceCodeRuledOut: true)
            }
            settings.observer.browserUnavailable(reason: reason)
            return try await authorizationCodeCredential(
                for: configuration, presentation: .pasteBack, settings: settings)
        }
    }
}
