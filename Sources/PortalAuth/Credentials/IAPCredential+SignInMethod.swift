public import Foundation
import PortalAuthStore

extension IAPCredential {
    /// Signs the user in by `method` and returns the credential.
    ///
    /// ```swift
    /// // Over SSH or in a container: a code to enter on a verification page from any device.
    /// let credential = try await IAPCredential.credential(for: configuration, using: .deviceCode)
    /// ```
    /// With ``SignInMethod/automatic`` the browser is used when it can reach the person (see ``SignInEnvironment``; a
    /// browser the person or the app named, such as `$BROWSER`, whatever the display); otherwise, or at once when the
    /// browser command fails, the device code when the identity provider offers one, else paste-back when the settings
    /// accept pasted addresses, else ``SignInError`` at once. Without an observer (the silent default) no remote path
    /// can be shown to anyone, so that ends in ``SignInError`` at once too, logged with what to set; so does
    /// ``SignInMethod/deviceCode`` without an observer (nothing would show the code).
    ///
    /// The device authorization endpoint is `deviceAuthorizationURL` when given, else for Microsoft Entra
    /// `…/oauth2/v2.0/devicecode` beside the authorize endpoint, else the discovery document's
    /// `device_authorization_endpoint`. Device-code sign-ins have no nonce; the ID token's `aud`, `exp` and `iss`
    /// (when the issuer can be known) are checked as for the browser, and the credential is stored and refreshed alike.
    ///
    /// - Throws: as ``credential(for:settings:replacing:)``, and a device-code error (a `CategorizedError`: not offered, denied, expired);
    ///   `CancellationError` at once when the task is cancelled, polling included.
    public static func credential(
        for configuration: IAPConfiguration, using method: SignInMethod, deviceAuthorizationURL: URL? = nil,
        settings: SignInSettings = SignInSettings(), replacing previous: IAPCredential? = nil
    ) async throws -> IAPCredential {
        switch method {
        case .browser:
            return try await authorizationCodeCredential(
                for: configuration, presentation: .browser, settings: settings, replacing: previous)
        case .pasteBack:
            guard settings.acceptsPastedRedirect else {
                throw SignInError.noRemotePath("paste-back was asked for")
            }
            return try await authorizationCodeCredential(
                for: configuration, presentation: .pasteBack, settings: settings, replacing: previous)
        case .deviceCode:
            guard
                let endpoint = await DeviceAuthorizationEndpoint.resolve(
                    explicit: deviceAuthorizationURL, authorizeURL: configuration.authorizeURL,
                    issuer: configuration.issuer,
                    httpClient: settings.httpClient)
            else { throw DeviceCodeError.notOffered(authorizeURL: configuration.authorizeURL) }
            // A code shown to nobody would be a silent wait until it expires: stop now, and say what to set.
            if settings.tellsNobody { throw settings.unheard("a device code was asked for (SignInMethod.deviceCode)") }
            return try await deviceCodeCredential(for: configuration, endpoint: endpoint, settings: settings)
        case .outOfBand:
            throw SignInError.methodUnsupported(
                "out-of-band codes (urn:ietf:wg:oauth:2.0:oob) are an ArcGIS portal sign-in; an identity provider offers the device code instead."
            )
        case .automatic:
            let reason: String
            if settings.browserReachesPerson {
                do {
                    // A failing browser command: the device code takes over where the provider offers one (asked
                    // only then), else the URL already shown is opened elsewhere and the final address pasted.
                    let offersDeviceCode: @Sendable () async -> Bool = {
                        await DeviceAuthorizationEndpoint.resolve(
                            explicit: deviceAuthorizationURL, authorizeURL: configuration.authorizeURL,
                            issuer: configuration.issuer,
                            httpClient: settings.httpClient) != nil
                    }
                    return try await authorizationCodeCredential(
                        for: configuration, presentation: .browserElsePaste(takenOver: offersDeviceCode),
                        settings: settings, replacing: previous)
                } catch let error as SignInError where error.isBrowserFailure {
                    reason = error.browserFailureReason ?? error.description
                }
            } else {
                reason = settings.reasonBrowserUnused
            }
            // A device code or a paste request shown to nobody would be a silent wait: stop now, and say what to set.
            if settings.tellsNobody, settings.browser != nil { throw settings.unheard(reason) }
            settings.observer.browserUnavailable(reason: reason)
            if let endpoint = await DeviceAuthorizationEndpoint.resolve(
                explicit: deviceAuthorizationURL, authorizeURL: configuration.authorizeURL,
                issuer: configuration.issuer,
                httpClient: settings.httpClient)
            {
                if settings.tellsNobody { throw settings.unheard(reason) }
                return try await deviceCodeCredential(for: configuration, endpoint: endpoint, settings: settings)
            }
            guard settings.acceptsPastedRedirect, !settings.tellsNobody else {
                // No browser set: the caller shows the URL itself (its observer or logger hears it).
                if settings.browser == nil {
                    return try await authorizationCodeCredential(
                        for: configuration, presentation: .browser, settings: settings, replacing: previous)
                }
                throw SignInError.noRemotePath(reason, deviceCodeRuledOut: true)
            }
            return try await authorizationCodeCredential(
                for: configuration, presentation: .pasteBack, settings: settings, replacing: previous)
        }
    }

    /// The device authorization grant against `endpoint`.
    static func deviceCodeCredential(for configuration: IAPConfiguration, endpoint: URL, settings: SignInSettings)
        async throws -> IAPCredential
    {
        let issuer = try await IssuerDiscovery.issuer(
            forAuthorizeURL: configuration.authorizeURL, explicit: configuration.issuer, httpClient: settings.httpClient
        )
        if let warning = IssuerDiscovery.tokenEndpointWarning(issuer, tokenURL: configuration.tokenURL) {
            settings.observer.configurationWarning(warning)
        }
        let flow = DeviceCodeFlow(
            deviceAuthorizationURL: endpoint, tokenURL: configuration.tokenURL, clientID: configuration.clientID,
            scopes: configuration.scopes)
        let result = try await flow.run(settings: settings)
        return try await signedIn(
            configuration, tokens: result.tokens, nonce: nil, issuer: issuer,
            receivedAt: result.receivedAt, settings: settings)
    }
}
