/// How an interactive sign-in reaches the person signing in.
///
/// ```swift
/// let credential = try await IAPCredential.credential(for: configuration, using: .deviceCode)
/// ```
public enum SignInMethod: Sendable, Hashable, CustomStringConvertible {
    /// The browser on this machine when one can open (a display, no SSH session without a forwarded one; or, whatever
    /// the display, a browser the person or the app named: `$BROWSER`, ``SignInSettings/browserCommand(_:arguments:)``,
    /// WSL's Windows browser — see ``BrowserOpener/isVisibleWithoutDisplay``), else — and at once when the browser
    /// command fails — the remote path: the device code where the identity provider has one, else
    /// pasting the final address back (when ``SignInSettings/acceptsPastedRedirect`` allows it).
    case automatic
    /// Authorization code with PKCE: the browser opens here and the redirect reaches a loopback port.
    case browser
    /// Authorization code with PKCE without starting a browser: the URL is shown, the person signs in on any machine
    /// and pastes the address the browser ends on (``SignInSettings/acceptsPastedRedirect`` must be true).
    case pasteBack
    /// The device authorization grant (RFC 8628): a code to enter on a verification page from any device.
    case deviceCode
    /// ArcGIS portals: the out-of-band redirect `urn:ietf:wg:oauth:2.0:oob`; the portal's page shows a code to paste.
    /// The app's registration must list that redirect URI.
    case outOfBand

    public var description: String {
        switch self {
        case .automatic: "automatic"
        case .browser: "browser"
        case .pasteBack: "paste-back"
        case .deviceCode: "device code"
        case .outOfBand: "out-of-band code"
        }
    }
}
