import ArgumentParser
import Foundation
import PortalAuth

/// `portal-auth token`: prints a stored token that stays valid long enough, refreshing it when needed.
///
/// The hot path of scripts: with a valid stored token it reads the store once and prints, with no network.
struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Print a valid access token for a stored sign-in, refreshing it when needed.",
        usage: "portal-auth token [<selection>] [--format <format>] [<options>]",
        discussion: """
            Picks the stored sign-in with --portal (and --client-id when several apps are signed in to it), \
            --iap (the file, or an identical copy of it), --url (the first sign-in whose portal or \
            hosts_behind_proxy covers the URL) or --name; without them, the only stored sign-in, else the \
            default one (`portal-auth use`). When the \
            access token has less than --min-valid seconds left, it is refreshed first; when many processes do \
            this at once, one refresh request is sent and all of them print the same new token. When the \
            provider issues tokens shorter than --min-valid, a token is printed until half its lifetime has passed \
            (also one another process just refreshed), then refreshed, and a warning shown once per sign-in says \
            what to set. With --id-token \
            the ID token is the one that must last --min-valid seconds; an identity provider may refresh without \
            sending a new ID token, and then the old one is never printed: a new sign-in is needed (exit 77, or \
            with --interactive the browser opens). With --url naming a host behind an Identity-Aware Proxy, the \
            token printed is the one `request` and `exec` send there: the ID token, as the ArcGIS Maps SDK sends \
            it, or the access token with --proxy-token access (or PORTAL_AUTH_PROXY_TOKEN=access); \
            --proxy-token also picks it with any other selection.

            Formats: plain prints the token and a newline; header prints a header line for curl -H: \
            `X-Esri-Authorization: Bearer ...` for a portal (ArcGIS reads it even where Authorization is taken by \
            a proxy or web-tier authentication) and `Authorization: Bearer ...` for an IAP (--header-name changes \
            the name); json prints the object every command that prints a token prints (see \
            `portal-auth help`): kind, url, username, client_id, token, token_type, expires_at (ISO 8601), \
            expires_in (seconds left), ssl_required, and for an IAP configuration_file, id_token and its expiry \
            (an expired ID token is left out: id_token null, its expiry kept; --id-token asks for a valid one).

            A browser is never opened unless --interactive is given. Without it, when a sign-in is needed \
            (nothing stored, or the refresh token expired or was revoked) the exit status is 77 and the command \
            to run is printed on standard error. Nothing but the token is printed on standard output.

            Examples:
              header=$(portal-auth token --portal https://www.arcgis.com \\
                  --format header)
              curl -H "$header" https://www.arcgis.com/sharing/rest/portals/self
              portal-auth token --iap contoso-iap.json --min-valid 900
              portal-auth token --format json \\
                  --url https://maps.contoso.com/portal/sharing/rest

            A token known to be expired is never printed: when a refresh brings an access token that expired as \
            it came (expires_in 0) or is already past half its lifetime (a 1-second token whose answer was slow), \
            the exit status is 69 with the reason, and the refresh's new refresh token is stored. Once the \
            identity provider refused the refresh token, no token of that sign-in is printed, even an access \
            token not yet expired: exit 77, as `status` says ("not usable"), until a new sign-in.

            Exit status: 0 a token was printed; 64 wrong usage; 65 the store is corrupted; 69 the identity \
            provider is unreachable or failing, or its answer unusable (the stored sign-in is kept; try again); \
            77 a sign-in is needed (also after the refresh token was refused).
            """
    )

    @OptionGroup var selection: CredentialSelection

    @Option(
        name: .customLong("min-valid"),
        help: ArgumentHelp(
            "Seconds the printed token must stay valid; refresh first when it has less (tokens the provider issues for less: "
                + "refresh once half their lifetime has passed).", valueName: "seconds"))
    var minValid: Int = 300

    @Option(help: ArgumentHelp("Output format: plain, header or json.", valueName: "format"))
    var format: TokenFormat = .plain

    @Flag(
        name: .customLong("id-token"),
        help: """
            IAP only: print the OpenID Connect ID token instead of the access token; it too must have --min-valid \
            seconds left (when a refresh brings no new one, a new sign-in is needed: exit 77).
            """)
    var idToken = false

    @Option(name: .customLong("proxy-token"), help: ProxyTokenChoice.help)
    var proxyToken: ProxyTokenChoice?

    @Option(
        name: .customLong("header-name"),
        help: ArgumentHelp(
            "With --format header: the header name to print (default: X-Esri-Authorization for a portal sign-in, "
                + "Authorization for an IAP).",
            valueName: "name"))
    var headerName: String?

    @Flag(help: "Sign in through the browser when nothing usable is stored (as login / iap login would).")
    var interactive = false

    @OptionGroup var session: SessionOptions

    /// The values, for `TokenInvocation` (which the fast path in `FastCommandLine` fills in too).
    var invocation: TokenInvocation {
        TokenInvocation(
            selection: selection.arguments, minValid: minValid, format: format, idToken: idToken,
            proxyToken: proxyToken, headerName: headerName,
            interactive: interactive, session: session.arguments)
    }

    func validate() throws {
        try invocation.validate()
    }

    func run() async throws {
        try await invocation.run()
    }

    /// "no stored sign-in for the portal https://…" (see `TokenInvocation.nothingStored(for:)`).
    static func nothingStored(for target: CredentialSelection.Target) -> String {
        TokenInvocation.nothingStored(for: target)
    }
}
