import ArgumentParser
import PortalAuth

/// Which token goes to the hosts behind an Identity-Aware Proxy (`--proxy-token`, `$PORTAL_AUTH_PROXY_TOKEN`):
/// the ID token, as the ArcGIS Maps SDK sends it, or the access token, for proxies that check access tokens.
enum ProxyTokenChoice: String, CaseIterable, ExpressibleByArgument, Sendable {
    /// The OpenID Connect ID token (the default).
    case id
    /// The access token.
    case access

    /// The environment variable that sets the default.
    static let environmentVariable = "PORTAL_AUTH_PROXY_TOKEN"

    /// The library's name of the token.
    var token: IAPTokenInfo.Token { self == .id ? .idToken : .accessToken }

    /// `given`, else `$PORTAL_AUTH_PROXY_TOKEN`, else the ID token.
    ///
    /// - Throws: `ValidationError` for a variable that names neither.
    static func resolved(_ given: ProxyTokenChoice?) throws -> ProxyTokenChoice {
        try override(given) ?? .id
    }

    /// `given`, else `$PORTAL_AUTH_PROXY_TOKEN`; nil when neither says (a sign-in's stored choice then applies).
    ///
    /// - Throws: `ValidationError` for a variable that names neither.
    static func override(_ given: ProxyTokenChoice?) throws -> ProxyTokenChoice? {
        if let given { return given }
        guard let text = ProcessEnvironment.value(of: environmentVariable), !text.isEmpty else { return nil }
        guard let choice = ProxyTokenChoice(rawValue: text.lowercased()) else {
            throw ValidationError(
                "\(environmentVariable)" + MessagePart.given("=", DisplayText.neutralised(text, limit: 40))
                    + " is neither id nor access")
        }
        return choice
    }

    /// The choice for `credential`: `given`, else `$PORTAL_AUTH_PROXY_TOKEN`, else the one stored with the sign-in
    /// (`iap login --proxy-token`), else the ID token. (The variable was checked in `validate()`.)
    static func chosen(_ given: ProxyTokenChoice?, for credential: IAPCredential) -> ProxyTokenChoice {
        if let override = (try? override(given)) ?? nil { return override }
        return stored(credential.storedTokenSentToProxy) ?? .id
    }

    /// The tool's name of a stored choice.
    static func stored(_ token: IAPTokenInfo.Token?) -> ProxyTokenChoice? {
        token.map { $0 == .idToken ? .id : .access }
    }

    /// What `status` and the errors say: "the ID token" or "the access token".
    var phrase: String { self == .id ? "the ID token" : "the access token" }

    /// The help of `--proxy-token`.
    static let help = ArgumentHelp(
        "IAP: the token sent to hosts behind the proxy, id (as the ArcGIS Maps SDK sends) or access (default: $PORTAL_AUTH_PROXY_TOKEN, else the choice stored by `iap login --proxy-token`, else id).",
        valueName: "id|access")
}
