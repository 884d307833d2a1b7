public import Foundation
import PortalAuthTransport

extension IAPConfiguration {
    /// Creates a configuration for the Microsoft Entra application proxy (Microsoft identity platform v2.0).
    ///
    /// The endpoints are `https://login.microsoftonline.com/{tenantID}/oauth2/v2.0/{authorize,token,logout}`
    /// and the scopes `<clientID>/.default`, `offline_access`, `openid` and `profile`.
    ///
    /// - Parameters:
    ///   - tenantID: The directory (tenant) ID: a GUID, a domain such as `contoso.onmicrosoft.com` or a verified
    ///     custom domain, or `organizations`/`common` (any directory's work or school accounts; the tenant signed in
    ///     to is then the ID token's `tid`). `consumers` (personal accounts only) cannot serve an application proxy
    ///     and is refused when signing in, before the browser opens.
    ///   - clientID: The application (client) ID of the app registration.
    ///   - redirectURL: A redirect URL registered for the app, e.g. `http://localhost/callback`
    ///     (Entra accepts any port on `localhost` for a registered `http://localhost/...`).
    ///   - hostsBehindProxy: The host patterns published through the proxy, e.g. `["*.contoso.com"]`.
    ///   - authorizationPromptType: The user interaction asked for; `.unspecified` by default.
    /// - Throws: ``ConfigurationError`` listing every problem, the tenant ID's included.
    public static func microsoft(
        tenantID: String,
        clientID: String,
        redirectURL: URL,
        hostsBehindProxy: [String],
        authorizationPromptType: IAPAuthorizationPromptType = .unspecified
    ) throws(ConfigurationError) -> IAPConfiguration {
        let tenantIsValid =
            !tenantID.isEmpty
            && tenantID.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") }
        var issues: [ConfigurationIssue] = []
        if tenantID.lowercased() == "consumers" {
            issues.append(
                ConfigurationIssue(
                    message: "`tenantID` cannot be consumers: "
                        + EntraAuthority.personalAccountsReason(host: "login.microsoftonline.com"),
                    key: "tenantID"))
        } else if !tenantIsValid {
            issues.append(
                ConfigurationIssue(
                    message:
                        "`tenantID` must be the directory (tenant) ID, a GUID or a domain such as contoso.onmicrosoft.com, found \"\(tenantID)\"",
                    key: "tenantID"))
        }
        let endpoints = microsoftLoginBase.appending(path: tenantIsValid ? tenantID : "common").appending(
            path: "oauth2/v2.0")
        do {
            let configuration = try configuration(
                authorizeURL: endpoints.appending(path: "authorize"),
                tokenURL: endpoints.appending(path: "token"),
                logoutURL: endpoints.appending(path: "logout"),
                clientID: clientID, redirectURL: redirectURL,
                scopes: [clientID + "/.default", "offline_access", "openid", "profile"],
                hostsBehindProxy: hostsBehindProxy, authorizationPromptType: authorizationPromptType)
            if issues.isEmpty { return configuration }
        } catch {
            // The scopes derive from the client ID, whose own problem is already listed.
            issues += error.issues.filter { !($0.key ?? "").hasPrefix("scopes") }
        }
        throw .invalid(nil, issues: issues)
    }

    /// The Microsoft identity platform's sign-in host.
    private static let microsoftLoginBase = URL(string: "https://login.microsoftonline.com")!

    /// Whether ``authorizeURL`` is a Microsoft identity platform endpoint (`login.microsoftonline.com`, or a national
    /// cloud's: `login.microsoftonline.us`, `login.partner.microsoftonline.cn`, `login.chinacloudapi.cn`).
    public var isMicrosoftEntra: Bool { EntraAuthority.isEntraHost(authorizeURL) }

    /// Whether `url` is on a Microsoft identity platform sign-in host (see ``isMicrosoftEntra``).
    package static func isMicrosoftEntraEndpoint(_ url: URL) -> Bool { EntraAuthority.isEntraHost(url) }

    /// For a sign-in at Microsoft Entra ID, what its AADSTS50011 page in the browser means and who fixes it: the
    /// redirect URL (without its port, which Entra ignores for `localhost`, `reply-url.md`) is not registered for the
    /// app. Nil for other providers. Entra shows this error in the browser only, never to the waiting tool.
    package static func entraRedirectAdvice(authorizationURL: URL, redirectURL: URL) -> String? {
        guard isMicrosoftEntraEndpoint(authorizationURL) else { return nil }
        var registered = URLComponents(url: redirectURL, resolvingAgainstBaseURL: false)
        registered?.port = nil
        let shown = registered?.url?.absoluteString ?? redirectURL.absoluteString
        return "With Microsoft Entra ID, AADSTS50011 there means this redirect URL is not registered: an admin adds "
            + "\(shown) under the app registration's Authentication > \"Mobile and desktop applications\" (any port "
            + "on localhost matches)."
    }
}
