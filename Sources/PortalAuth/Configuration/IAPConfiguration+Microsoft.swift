public import Foundation
import PortalAuthTransport

extension IAPConfiguration {
    /// Creates a configuration for the Microsoft Entra application proxy (Microsoft identity platform v2.0).
    ///
    /// The endpoints are `https://login.microsoftonline.com/{tenantID}/oauth2/v2.0/{authorize,token,logout}`
    /// and the scopes `<clientID>/.default`, `offline_access`, `openid` and `profile`.
    ///
    /// - Parameters:
    ///   - tenantID: The directory (tenant) ID: a GUID, a domain such as `contoso.onmicrosoft.com`,
    ///     or `organizations`/`common`.
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
        if !tenantIsValid {
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

    /// Whether ``authorizeURL`` is a Microsoft identity platform endpoint (`login.microsoftonline.com`).
    public var isMicrosoftEntra: Bool {
        URLNormalization.host(of: authorizeURL) == "login.microsoftonline.com"
    }
}
