import Foundation
import PortalAuthCore

/// What the machine offers a sign-in: whether a browser started here can be seen by the person signing in.
///
/// No graphical display (`DISPLAY` and `WAYLAND_DISPLAY` unset), or an SSH session (`SSH_CONNECTION`, `SSH_CLIENT`
/// or `SSH_TTY` set) whose `DISPLAY` is not a forwarded one (`localhost:10.0`, not `:0`), means a browser started
/// here would open nowhere, or on a screen the person is not looking at.
public struct SignInEnvironment: Sendable, Equatable {
    /// Whether a graphical display is available to this process.
    public var hasDisplay: Bool
    /// Whether the process runs in an SSH session.
    public var isSSHSession: Bool
    /// Whether the display is forwarded through SSH (X11 forwarding: `DISPLAY` names a host, e.g. `localhost:10.0`).
    public var hasForwardedDisplay: Bool

    /// Creates an environment description.
    public init(hasDisplay: Bool, isSSHSession: Bool, hasForwardedDisplay: Bool) {
        self.hasDisplay = hasDisplay
        self.isSSHSession = isSSHSession
        self.hasForwardedDisplay = hasForwardedDisplay
    }

    /// The variables `current` reads.
    @usableFromInline
    static let variableNames = ["DISPLAY", "WAYLAND_DISPLAY", "SSH_CONNECTION", "SSH_CLIENT", "SSH_TTY"]

    /// The environment described by the variables `environment` (this process's by default).
    public static func current(
        _ environment: [String: String] = ProcessEnvironment.values(of: variableNames)
    ) -> SignInEnvironment {
        func value(_ name: String) -> String? {
            guard let value = environment[name]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else {
                return nil
            }
            return value
        }
        let display = value("DISPLAY")
        let wayland = value("WAYLAND_DISPLAY")
        let ssh = value("SSH_CONNECTION") != nil || value("SSH_CLIENT") != nil || value("SSH_TTY") != nil
        // X11 forwarding sets DISPLAY to host:N (e.g. localhost:10.0); a local display is :N.
        let forwarded = display.map { !$0.hasPrefix(":") && !$0.hasPrefix("unix:") && $0.contains(":") } ?? false
        return SignInEnvironment(
            hasDisplay: display != nil || wayland != nil, isSSHSession: ssh, hasForwardedDisplay: forwarded)
    }

    /// Whether a browser started on this machine can reach the person: a display, and in an SSH session a forwarded one.
    public var canShowBrowser: Bool {
        guard hasDisplay else { return false }
        return !isSSHSession || hasForwardedDisplay
    }

    /// Why a browser is not started here, for messages; nil when one can be.
    public var reasonBrowserCannotShow: String? {
        if canShowBrowser { return nil }
        if isSSHSession { return "this is an SSH session without a forwarded display" }
        return "there is no display (DISPLAY and WAYLAND_DISPLAY are not set)"
    }
}
