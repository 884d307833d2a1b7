public import Logging
import PortalAuthCore
import PortalAuthTransport

/// How an interactive sign-in runs: which browser, how long to wait, where to report progress,
/// and the HTTP client for the token endpoint.
public struct SignInSettings: Sendable {
    /// Opens the authorization URL; `nil` never starts a browser (the URL is still reported to the observer).
    public var browser: (any BrowserOpener)?
    /// How long to wait for the browser sign-in before giving up (default 300 s).
    public var timeout: Duration
    /// Receives progress for the user; never receives a secret.
    public var observer: any SignInObserver
    /// Whether a redirect URL pasted on standard input may finish the sign-in (a browser on another machine).
    public var acceptsPastedRedirect: Bool
    /// The HTTP client for token, discovery and revocation requests.
    public var httpClient: any TransportClient
    /// When the resulting credential refreshes its tokens.
    public var refreshPolicy: RefreshPolicy
    /// Debug events; never a secret.
    public var logger: Logger
    /// The clock of polling sign-ins (the device code); tests inject one.
    public var clock: any SignInClock
    /// Whether a browser started here can reach the person, for ``SignInMethod/automatic``.
    public var environment: SignInEnvironment
    /// Lines pasted by the person (paste-back, out-of-band codes): standard input when not given.
    public var pastedLines: @Sendable () -> AsyncStream<String>
    /// How the sign-ins that are not given a method reach the person: `OAuthUserCredential.credential(for:settings:)`,
    /// `IAPCredential.credential(for:settings:replacing:)` and the ``Authenticator``'s. ``SignInMethod/automatic`` (the
    /// default) never starts a browser where ``environment`` says nobody would see it: over SSH without a forwarded
    /// display it takes a remote path, or fails at once (``SignInError``) when there is none.
    public var signInMethod: SignInMethod
    /// What the browser pages tell the person to do once the sign-in (or sign-out) is over, after "You are signed
    /// in to …": by default "You can close this tab and return to the terminal."; an app says e.g. "You can close
    /// this tab and return to My Maps."
    public var pageReturnHint = "You can close this tab and return to the terminal."
    /// The last paragraph of the browser's page when the sign-in failed there: by default "You can close this tab.
    /// The terminal shows what to do next."
    public var pageFailureHint = LoopbackListener.Configuration.terminalFailureNextStep

    /// The system browser: the command of `$BROWSER`, else on WSL `wslview` or the Windows default browser, else
    /// `xdg-open`, started with the URL behind a launch page that other local users cannot read. `$BROWSER` and WSL's
    /// browser are tried without a display too (``BrowserOpener/isVisibleWithoutDisplay``).
    public static var systemBrowser: any BrowserOpener { CommandBrowserOpener.systemDefault() }

    /// Settings with the defaults: the system browser (`$BROWSER`, else WSL's Windows browser, else `xdg-open`),
    /// 300 s, libcurl, no observer (a sign-in that would need one fails at once, see ``SignInError``).
    public init(
        browser: (any BrowserOpener)? = SignInSettings.systemBrowser,
        timeout: Duration = .seconds(300),
        observer: (any SignInObserver)? = nil,
        acceptsPastedRedirect: Bool = false,
        httpClient: (any TransportClient)? = nil,
        refreshPolicy: RefreshPolicy = RefreshPolicy(),
        logger: Logger = Logger(label: "PortalAuth", factory: { _ in SwiftLogNoOpLogHandler() }),
        clock: (any SignInClock)? = nil,
        environment: SignInEnvironment = .current(),
        pastedLines: (@Sendable () -> AsyncStream<String>)? = nil,
        signInMethod: SignInMethod = .automatic
    ) {
        self.browser = browser
        self.timeout = timeout
        self.observer = observer ?? SilentSignInObserver()
        self.acceptsPastedRedirect = acceptsPastedRedirect
        self.httpClient = httpClient ?? CurlHTTPClient()
        self.refreshPolicy = refreshPolicy
        self.logger = logger
        self.clock = clock ?? SystemSignInClock()
        self.environment = environment
        self.pastedLines = pastedLines ?? { StandardInputLines.stream() }
        self.signInMethod = signInMethod
    }
}
