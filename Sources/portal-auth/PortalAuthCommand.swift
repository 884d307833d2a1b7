import ArgumentParser
import Foundation
import PortalAuth

/// The `portal-auth` tool: the root command that holds every subcommand.
@main
struct PortalAuthCommand: AsyncParsableCommand {
    /// The commands under `portal-auth`; add a new command here.
    static let subcommands: [any ParsableCommand.Type] = [
        LoginCommand.self,
        IAPCommand.self,
        StatusCommand.self,
        TokenCommand.self,
        RefreshCommand.self,
        RevokeCommand.self,
        SignOutCommand.self,
        StoreCommand.self,
        GenerateTokenCommand.self,
        AppTokenCommand.self,
        RequestCommand.self,
        RegisterSchemeCommand.self,
        UnregisterSchemeCommand.self,
        HandleRedirectCommand.self,
    ]

    static let configuration = CommandConfiguration(
        commandName: "portal-auth",
        abstract: "Sign in to ArcGIS portals and to services behind an Identity-Aware Proxy from Linux.",
        discussion: """
            portal-auth opens the system browser for the sign-in page and catches the OAuth redirect on a \
            loopback port (http://127.0.0.1 or http://localhost), so people and scripts on Linux can get \
            tokens for ArcGIS Online, ArcGIS Enterprise, and services published through an Identity-Aware \
            Proxy such as the Microsoft Entra application proxy. A custom-scheme redirect URL such as \
            my-maps-app://auth (the SDK's IAP files use them) is received through the desktop's scheme \
            handler: see `portal-auth help register-scheme`.

            Start by checking an IAP configuration file:

              portal-auth iap check --config contoso-iap.json \\
                  --url https://maps.contoso.com/portal

            Run `portal-auth help <command>` (for example `portal-auth help iap check`) for details.

            Exit status: 0 success; 64 wrong usage; 65 invalid content (a configuration or a server's \
            answer); 66 an input file is missing or unreadable; 69 a server is unavailable; 70 an internal \
            or local error; 75 timed out; 77 refused, or a sign-in is needed; 130 interrupted.
            """,
        version: PortalAuthVersion.string,
        subcommands: subcommands
    )

    /// Runs the tool: core dumps are disabled before any token or password is in memory, and every command's
    /// `--timeout` counts from here (see `CommandClock`); then the chosen subcommand runs.
    static func main() async {
        do {
            try CoreDumpProtection.disable()
        } catch {
            StandardError.line("portal-auth: warning: \(error)")
        }
        _ = CommandClock.start
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}
