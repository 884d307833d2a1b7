import ArgumentParser
import Foundation
import PortalAuth

/// `portal-auth register-scheme`: makes portal-auth the desktop's handler of a custom URL scheme.
struct RegisterSchemeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "register-scheme",
        abstract: "Register portal-auth as this desktop's handler of a custom redirect scheme.",
        discussion: """
            For a redirect URL such as my-maps-app://auth (the SDK's IAP files and ArcGIS native-app \
            registrations use them) the browser hands the final address to the scheme's handler. This writes \
            $XDG_DATA_HOME/applications/portal-auth-<scheme>.desktop (default ~/.local/share/applications; \
            MimeType=x-scheme-handler/<scheme>, NoDisplay=true, Exec=<this program> handle-redirect %u), runs \
            update-desktop-database on that folder and `xdg-mime default`. A scheme another application \
            handles is left alone unless --force is given. `portal-auth unregister-scheme` undoes it.

            Examples:
              portal-auth register-scheme --config contoso-iap.json
              portal-auth register-scheme --scheme my-maps-app
            """
    )

    @OptionGroup var selection: SchemeSelection

    @Flag(help: "Take the scheme over from another application that handles it.")
    var force = false

    func run() async throws {
        do {
            for scheme in try await selection.schemes() {
                let registration = try SchemeRegistration.portalAuth(scheme: scheme)
                if try registration.status() == .registered {
                    StandardError.line(
                        "portal-auth already handles \(scheme): links (\(registration.desktopFilePath)).")
                    continue
                }
                try registration.register(force: force)
                StandardError.line("portal-auth now handles \(scheme): links (\(registration.desktopFilePath)).")
            }
        } catch {
            throw Failure.report(error)
        }
    }
}
