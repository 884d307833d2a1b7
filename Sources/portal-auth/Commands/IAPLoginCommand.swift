import ArgumentParser
import Foundation
import PortalAuth

/// `portal-auth iap login`: sign in to the identity provider in front of an Identity-Aware Proxy.
struct IAPLoginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Sign in to an Identity-Aware Proxy through the browser and keep the tokens.",
        usage: "portal-auth iap login --config <file> [<options>]",
        discussion: """
            Loads the IAP configuration file (see `portal-auth iap check`), opens the identity provider's \
            sign-in page (OpenID Connect authorization code with PKCE) and waits for the redirect on the \
            file's loopback redirect_url (or --redirect-url). A custom-scheme redirect_url such as \
            my-maps-app://auth is received through the desktop's scheme handler (`portal-auth register-scheme`; \
            asked once on a terminal), or pasted back when there is no desktop session. The ID token's audience, \
            nonce, expiry and issuer are checked before the tokens are stored; with openid among the scopes, an \
            answer without an ID token is refused. The ID token's signature is checked with the keys named by \
            the provider's OpenID Connect discovery document, looked for beside the authorize URL and in each folder \
            above it (for Microsoft Entra: the authority's v2.0 document, /{tenant}/v2.0/.well-known/\
            openid-configuration, whose issuer names the tenant's ID; with organizations or common, each ID \
            token's tid fills in its issuer template, and consumers is refused); a document whose issuer is not \
            the address it came from stops the sign-in before the browser opens. Give --issuer when the document \
            is elsewhere (Amazon Cognito), or to pin organizations to one Entra tenant. The scopes the provider grants are stored; refreshes send no \
            scope (Microsoft Entra ID, which requires one, gets the scopes asked for at sign-in). With \
            authorization_prompt_type "none", the ID token of the stored sign-in for the same provider and client \
            is sent as id_token_hint (to the browser only, never printed).

            Without a display (an SSH session, a container) or when the browser command fails, the tool signs \
            in with a device code instead when the identity provider offers one (RFC 8628: its discovery \
            document names a device_authorization_endpoint; Microsoft Entra always does; or give \
            --device-authorization-url): open the printed page on any device and enter the code. Otherwise, on \
            a terminal, it prints the URL and reads back the address the browser ends on.

            --proxy-token access stores, with the sign-in, that the hosts behind the proxy get the access token \
            instead of the ID token: later `request`, `token --url` and `exec` send it without the option \
            (their --proxy-token or PORTAL_AUTH_PROXY_TOKEN still overrides it), and `status` shows it.

            Example:
              portal-auth iap login --config contoso-iap.json
              portal-auth iap login --config contoso-iap.json --device-code
              portal-auth iap login --config contoso-iap.json --proxy-token access
            """
    )

    @Option(
        help: ArgumentHelp("The IAP configuration JSON file.", valueName: "file"),
        completion: .file(extensions: ["json"]))
    var config: String

    @Option(
        name: .customLong("redirect-url"),
        help: ArgumentHelp(
            "Redirect URL (loopback or custom scheme) to use (default: the file's redirect_url).", valueName: "url"))
    var redirectURL: String?

    @Option(
        name: .customLong("device-authorization-url"),
        help: ArgumentHelp(
            "The identity provider's device authorization endpoint, when its discovery document does not name one "
                + "(default: the discovery document's device_authorization_endpoint).",
            valueName: "url"))
    var deviceAuthorizationURL: String?

    @Option(
        help: ArgumentHelp(
            "The identity provider's issuer, when its OpenID Connect discovery document is not beside the authorize URL or in a folder above it (Amazon Cognito) (default: the file's issuer, else found from the authorize URL).",
            valueName: "url"))
    var issuer: String?

    @Option(
        help: ArgumentHelp(
            "A name for this sign-in, to pick it later with --name (see `portal-auth name`).", valueName: "name"))
    var name: String?

    @Option(
        name: .customLong("proxy-token"),
        help: ArgumentHelp(
            "The token later commands send to the hosts behind the proxy, id (as the ArcGIS Maps SDK sends) or access, stored with the sign-in (their --proxy-token or $PORTAL_AUTH_PROXY_TOKEN still overrides it; default: the choice of the sign-in this one replaces, else id).",
            valueName: "id|access"))
    var proxyToken: ProxyTokenChoice?

    @OptionGroup var session: SessionOptions

    func validate() throws {
        if let name, !SignInPreferences.isValidName(name) {
            throw ValidationError(
                "--name" + MessagePart.given(" \"", name, "\"")
                    + " is not a sign-in name: letters, digits and any of -_.@ (up to 64)")
        }
        if let deviceAuthorizationURL,
            URL(string: deviceAuthorizationURL)?.host == nil
                || !["https", "http"].contains(URL(string: deviceAuthorizationURL)?.scheme?.lowercased() ?? "")
        {
            throw ValidationError(
                "--device-authorization-url" + MessagePart.given(" \"", deviceAuthorizationURL, "\"")
                    + " is not an https URL; write it like https://login.example.com/oauth2/devicecode"
            )
        }
        if let issuer,
            URL(string: issuer)?.host == nil
                || !["https", "http"].contains(URL(string: issuer)?.scheme?.lowercased() ?? "")
                || URL(string: issuer)?.query != nil || URL(string: issuer)?.fragment != nil
        {
            throw ValidationError(
                "--issuer" + MessagePart.given(" \"", issuer, "\"")
                    + " is not an issuer URL (https, no query or fragment); write it like https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbCdEf"
            )
        }
        if let redirectURL, URL(string: redirectURL)?.host == nil {
            throw ValidationError(
                "--redirect-url" + MessagePart.given(" \"", redirectURL, "\"")
                    + " is not an absolute URL; write it like http://127.0.0.1/callback")
        }
    }

    func run() async throws {
        do {
            var configuration = try await IAPConfiguration.configuration(from: URL(fileURLWithPath: config))
            if let redirectURL, let url = URL(string: redirectURL) {
                configuration = configuration.replacingRedirectURL(url)
            }
            if let issuer { configuration.issuer = URL(string: issuer) }
            let target =
                "the identity provider at \(configuration.authorizeURL.host ?? "?") for \(DisplayText.path(config))"
            var settings = session.signInSettings(target: target)
            try SchemeSignIn.prepare(redirectURL: configuration.redirectURL, settings: &settings, target: target)
            let store = try session.credentialStore(settings: settings, forSignIn: true)
            let method = session.signInMethod
            let endpoint = deviceAuthorizationURL.flatMap(URL.init(string:))
            let previous = store.previousIAPSignIn(for: configuration)
            let credential = try await Failure.cancellableOnInterrupt { [configuration, settings] in
                try await IAPCredential.credential(
                    for: configuration, using: method, deviceAuthorizationURL: endpoint, settings: settings,
                    replacing: previous)
            }
            try await store.keepSignIn(credential, name: name, proxyToken: proxyToken)
            let who = credential.username.map { " as \(DisplayText.neutralised($0, limit: 200))" } ?? ""
            let expiry = try await credential.tokenInfo.accessTokenExpirationDate
            StandardError.line(
                "Signed in\(who) for \(DisplayText.path(config)). The access token is valid until \(expiry.ISO8601Format())."
            )
            StandardError.line("Stored in \(store.tokensPlace).")
            if let stored = ProxyTokenChoice.stored(credential.storedTokenSentToProxy) {
                StandardError.line(
                    "Hosts behind the proxy get \(stored.phrase) (stored with the sign-in; --proxy-token on a later command overrides it)."
                )
            }
        } catch {
            throw Failure.report(session.terminalNeeded(error))
        }
    }
}
