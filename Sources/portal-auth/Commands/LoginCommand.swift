import ArgumentParser
import Foundation
import PortalAuth

/// `portal-auth login`: sign in to an ArcGIS portal through the browser and keep the tokens.
struct LoginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Sign in to an ArcGIS portal through the browser and keep the tokens.",
        discussion: """
            Opens the portal's sign-in page in the browser (OAuth 2.0 authorization code with PKCE) and waits \
            for the redirect on a loopback port: http://127.0.0.1/callback on a free port unless --redirect-url \
            names another. Register that redirect URL for the app in the portal. The tokens go to the credential \
            store (see `portal-auth status`); `portal-auth token` hands them to scripts. A custom-scheme redirect \
            URL such as my-maps-app://auth is received through the desktop's scheme handler (see \
            `portal-auth register-scheme`), or pasted back without a desktop session.

            Without a display (an SSH session, a container) or when the browser command fails, the tool prints \
            the URL at once instead: sign in on any machine and paste the address the browser ends on. With \
            --redirect-url urn:ietf:wg:oauth:2.0:oob (where the app's registration lists it) the portal's page \
            shows a code to paste instead.

            Example:
              portal-auth login --portal https://www.arcgis.com --client-id abc123XYZ
            """
    )

    @Option(
        help: ArgumentHelp(
            "The portal URL, e.g. https://www.arcgis.com or https://gis.example.com/portal.", valueName: "url"))
    var portal: String

    @Option(
        name: .customLong("client-id"),
        help: ArgumentHelp("The app's client ID registered in the portal.", valueName: "id"))
    var clientID: String

    @Option(
        name: .customLong("redirect-url"),
        help: ArgumentHelp(
            "Redirect URL registered for the app: loopback (no port or port 0 means a free port) or a custom scheme such as my-maps-app://auth.",
            valueName: "url"))
    var redirectURL: String = OAuthUserConfiguration.defaultRedirectURL.absoluteString

    @Option(
        name: .customLong("refresh-token-expiration"),
        help: ArgumentHelp(
            "Lifetime of the refresh token to ask for, in minutes (at most 129600, 90 days).", valueName: "minutes"))
    var refreshTokenExpiration: Int = Int(
        OAuthUserConfiguration.defaultRefreshTokenExpirationInterval.components.seconds / 60)

    @Option(
        name: .customLong("refresh-token-exchange-interval"),
        help: ArgumentHelp(
            "Age in minutes at which the refresh token is exchanged for a new one (default 1440, 24 hours, or half "
                + "the refresh-token lifetime when that is shorter).", valueName: "minutes"))
    var refreshTokenExchangeInterval: Int?

    @Option(
        help: ArgumentHelp(
            "A name for this sign-in, to pick it later with --name (see `portal-auth name`).", valueName: "name"))
    var name: String?

    @OptionGroup var session: SessionOptions

    func validate() throws {
        if let name, !SignInPreferences.isValidName(name) {
            throw ValidationError(
                "--name" + MessagePart.given(" \"", name, "\"")
                    + " is not a sign-in name: letters, digits and any of -_.@ (up to 64)")
        }
        guard URL(string: portal)?.host != nil else {
            throw ValidationError(
                "--portal" + MessagePart.given(" \"", portal, "\"")
                    + " is not an absolute URL; write it like https://www.arcgis.com")
        }
        if session.deviceCode {
            throw ValidationError(
                "ArcGIS portals have no device code; on a terminal (over SSH: ssh -t) use --no-browser (paste the final address) "
                    + "or --redirect-url \(OutOfBandRedirect.uri), or name a browser that works here with --browser-command COMMAND"
            )
        }
        guard isOutOfBand || URL(string: redirectURL)?.host != nil else {
            throw ValidationError(
                "--redirect-url" + MessagePart.given(" \"", redirectURL, "\"")
                    + " is not an absolute URL; write it like http://127.0.0.1/callback")
        }
        guard refreshTokenExpiration > 0 else {
            throw ValidationError("--refresh-token-expiration must be a positive number of minutes")
        }
        do {
            try configuration.validate()
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// Whether the out-of-band redirect is asked for (the portal's page shows a code to paste).
    private var isOutOfBand: Bool { redirectURL == OutOfBandRedirect.uri }

    private var configuration: OAuthUserConfiguration {
        OAuthUserConfiguration(
            portalURL: OAuthUserConfiguration.normalizedPortalURL(URL(string: portal)!), clientID: clientID,
            redirectURL: isOutOfBand ? OAuthUserConfiguration.defaultRedirectURL : URL(string: redirectURL)!,
            refreshTokenExpirationInterval: .seconds(refreshTokenExpiration * 60),
            refreshTokenExchangeInterval: .seconds(
                refreshTokenExchangeInterval.map { $0 * 60 } ?? min(24 * 3600, refreshTokenExpiration * 30))
        )
    }

    func run() async throws {
        let configuration = self.configuration
        if let note = PortalURLNote.note(typed: portal, portalURL: configuration.portalURL) { StandardError.line(note) }
        let target = "the portal \(configuration.portalURL.absoluteString)"
        var settings = session.signInSettings(target: target)
        do {
            try SchemeSignIn.prepare(redirectURL: configuration.redirectURL, settings: &settings, target: target)
            let store = try session.credentialStore(settings: settings, forSignIn: true)
            let method = isOutOfBand ? SignInMethod.outOfBand : session.signInMethod
            let credential = try await Failure.cancellableOnInterrupt { [settings] in
                try await OAuthUserCredential.credential(for: configuration, using: method, settings: settings)
            }
            try await store.keepSignIn(credential, name: name)
            let who = credential.username.map { " as \(DisplayText.neutralised($0, limit: 200))" } ?? ""
            let expiry = try await credential.tokenInfo.expirationDate
            StandardError.line(
                "Signed in to \(configuration.portalURL.absoluteString)\(who). The access token is valid until \(expiry.ISO8601Format())."
            )
            StandardError.line("Stored in \(store.tokensPlace).")
        } catch {
            throw Failure.report(session.terminalNeeded(error))
        }
    }
}

/// The note said when the tool signs in to another spelling of the portal URL than the one typed.
enum PortalURLNote {
    /// "Using the portal URL https://gis.example.com/arcgis (from …/arcgis/sharing/rest): …", or nil when the portal
    /// URL is what was typed, give or take trailing slashes.
    static func note(typed: String, portalURL: URL) -> String? {
        var bare = Substring(typed)
        while bare.hasSuffix("/") { bare = bare.dropLast() }
        guard bare != portalURL.absoluteString else { return nil }
        return "Using the portal URL \(portalURL.absoluteString) (from \(DisplayText.neutralised(typed, limit: 300))): "
            + "the address ArcGIS clients take for the portal; the sign-in is stored under it."
    }
}

/// The out-of-band redirect URI an ArcGIS portal accepts for apps registered with it: its page shows the code.
enum OutOfBandRedirect {
    static let uri = "urn:ietf:wg:oauth:2.0:oob"
}
