import ArgumentParser
import Foundation
import PortalAuth

/// `portal-auth handle-redirect URL`: the desktop's handler of a registered custom scheme. Hands the address to
/// the waiting sign-in and exits.
struct HandleRedirectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "handle-redirect",
        abstract: "Hand a custom-scheme sign-in address to the waiting sign-in (run by the desktop).",
        discussion: """
            The desktop runs this when the browser opens an address with a scheme registered by \
            `portal-auth register-scheme` (the .desktop file's Exec line ends in %u). The address goes over a \
            private socket in $XDG_RUNTIME_DIR/portal-auth to the `portal-auth login` or `iap login` waiting for \
            it, which checks its state, iss and code as for a loopback redirect. An address that matches no \
            waiting sign-in is rejected. The address is never printed or logged.

            Exit status: 0 handed over; 65 no waiting sign-in matches; 64 not a custom-scheme address; 70 a \
            local problem (XDG_RUNTIME_DIR).
            """
    )

    @Argument(help: ArgumentHelp("The address the desktop opened, such as 'my-maps-app://auth?...'.", valueName: "url"))
    var url: String

    func run() throws {
        do {
            switch try SchemeRedirectForwarder.forward(url) {
            case .accepted:
                StandardError.line("portal-auth: the sign-in address was handed to the waiting sign-in; return to it.")
            case .refusalDelivered(let message):
                StandardError.line("portal-auth: the waiting sign-in received a refusal: \(message)")
            }
        } catch {
            throw Failure.report(error)
        }
    }
}
