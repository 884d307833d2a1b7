import ArgumentParser

/// `portal-auth iap`: the commands for services behind an Identity-Aware Proxy.
struct IAPCommand: AsyncParsableCommand {
    /// The commands under `portal-auth iap`; add a new command here.
    static let subcommands: [any ParsableCommand.Type] = [
        IAPCheckCommand.self,
        IAPLoginCommand.self,
        IAPLogoutCommand.self,
    ]

    static let configuration = CommandConfiguration(
        commandName: "iap",
        abstract: "Work with Identity-Aware Proxy (IAP) configurations and sign-ins.",
        discussion: """
            An IAP configuration is a JSON file that describes the application registered with the identity \
            provider in front of the proxy (for example Microsoft Entra ID) and the hosts behind the proxy. \
            The same file works with the ArcGIS Maps SDKs on other platforms.
            """,
        subcommands: subcommands
    )
}
