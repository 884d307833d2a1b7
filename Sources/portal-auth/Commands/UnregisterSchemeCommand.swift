import ArgumentParser
import Foundation
import PortalAuth

/// `portal-auth unregister-scheme`: removes portal-auth's handler of a custom URL scheme.
struct UnregisterSchemeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unregister-scheme",
        abstract: "Remove portal-auth's registration as a custom redirect scheme's handler.",
        discussion: """
            Removes $XDG_DATA_HOME/applications/portal-auth-<scheme>.desktop and portal-auth's default-handler \
            entry for x-scheme-handler/<scheme> from mimeapps.list, then updates the desktop database. Other \
            applications' registrations are left alone.
            """
    )

    @OptionGroup var selection: SchemeSelection

    func run() async throws {
        do {
            for scheme in try await selection.schemes() {
                let registration = try SchemeRegistration.portalAuth(scheme: scheme)
                if try registration.unregister() {
                    StandardError.line("portal-auth no longer handles \(scheme): links.")
                } else {
                    StandardError.line("portal-auth was not registered for \(scheme): links; nothing to remove.")
                }
            }
        } catch {
            throw Failure.report(error)
        }
    }
}
