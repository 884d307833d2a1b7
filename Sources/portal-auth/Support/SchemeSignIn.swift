import Foundation
import Glibc
import PortalAuth

/// Prepares a sign-in whose redirect URL has a custom scheme: on a desktop, makes sure portal-auth handles the
/// scheme (asking once on a terminal); without one, switches to pasting the final address back.
enum SchemeSignIn {
    /// Adjusts `settings` for `redirectURL`; nothing happens for a loopback redirect.
    ///
    /// - Throws: a `SchemeRedirectError` with the command to run when the scheme is not registered and nobody can
    ///   be asked, or the registration fails.
    static func prepare(
        redirectURL: URL, settings: inout SignInSettings, target: String,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws {
        guard let redirect = CustomSchemeRedirect(redirectURL) else { return }
        let interactive = isatty(0) == 1 && StandardError.isTerminal
        guard CustomSchemeRedirect.hasDesktopSession(environment: environment) else {
            StandardError.line(
                "No desktop session (DISPLAY and WAYLAND_DISPLAY are unset), so no browser here can hand the "
                    + "\(redirect.scheme): address back to portal-auth.")
            if isatty(0) == 1 {
                StandardError.line(
                    "Open the URL below in a browser on any machine, sign in, and paste here the address the browser "
                        + "ends on or fails to open (it starts with \(redirect.url.absoluteString)).")
                settings.acceptsPastedRedirect = true
                settings.observer = TerminalSignInObserver(target: target, pasteHint: true)
            }
            return
        }
        let registration = try SchemeRegistration.portalAuth(scheme: redirect.scheme, environment: environment)
        let command = "portal-auth register-scheme --scheme \(redirect.scheme)"
        switch try registration.status() {
        case .registered:
            return
        case .handledBy(let other):
            StandardError.line(
                "portal-auth: warning: \(redirect.scheme): links open \(other), not portal-auth; unless that application forwards "
                    + "them to portal-auth, the sign-in cannot finish. To take the scheme over: \(command) --force")
        case .notRegistered:
            guard interactive else {
                throw SchemeRedirectSetupNeeded(scheme: redirect.scheme, command: command)
            }
            StandardError.write(
                "portal-auth is not registered as this desktop's handler of \(redirect.scheme): links, so the browser "
                    + "cannot hand the sign-in back. Register it now (writes \(registration.desktopFilePath))? [y/N] ")
            let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
            guard answer == "y" || answer == "yes" else {
                throw SchemeRedirectSetupNeeded(scheme: redirect.scheme, command: command)
            }
            try registration.register()
            StandardError.line("portal-auth now handles \(redirect.scheme): links (\(registration.desktopFilePath)).")
        }
    }
}
